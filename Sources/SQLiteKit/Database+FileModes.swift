#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Database {
    /// What SQLite adds to a database's path for the files it keeps beside
    /// it: the WAL, its shared-memory index and the rollback journal.
    static let companionFileSuffixes = ["-wal", "-shm", "-journal"]

    /// Makes the database file at `path`, and whichever of its companion
    /// files exist, readable and writable by their owner only (0600),
    /// creating the database file, empty, if it is missing.
    ///
    /// The file holds credentials and messages, and would otherwise get
    /// the process's umask (usually 0644), so that a data directory that
    /// others may enter, as a pre-created `/var/lib/swiftlet` often is,
    /// exposes it. SQLite takes an empty file for a new database and gives
    /// the companions it creates the database file's mode, so after this
    /// no file of the database is ever readable by others, whatever the
    /// umask; companions left by an earlier run are tightened too.
    ///
    /// - Throws: `DatabaseError` with `.cannotOpen` or `.permission` when
    ///   a file cannot be created or its mode changed.
    ///
    /// The corresponding C functions are `open`, `fchmod` and `chmod`.
    static func restrictFileModes(at path: String) throws {
        // Read-only is enough to create the file and change its mode; SQLite
        // decides on its own whether it can write.
        let descriptor = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw fileError(.cannotOpen, "cannot create or open", path) }
        defer { closeDescriptor(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else { throw fileError(.permission, "cannot make private", path) }
        for suffix in companionFileSuffixes {
            guard chmod(path + suffix, 0o600) == 0 || errno == ENOENT else {
                throw fileError(.permission, "cannot make private", path + suffix)
            }
        }
    }

    /// A `DatabaseError` for a file operation that failed with `errno`.
    private static func fileError(_ code: ResultCode, _ what: String, _ path: String) -> DatabaseError {
        DatabaseError(resultCode: code, message: "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}

/// Closes a file descriptor (outside `Database`, whose `close()` would
/// shadow the C function).
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
