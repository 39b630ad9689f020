#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The uploaded files on disk (XEP-0363), under `<data>/uploads`:
///
/// ```
/// uploads/                      0700
///   <slot id>/                  0700, made when the upload completes
///     <file name>               0600, the file as the client named it
///   <slot id>.part              0600, an upload in progress
/// ```
///
/// Slot ids are base64url, so `.part` files cannot clash with slot
/// directories, and a slot has at most one upload in progress (the part
/// file is created exclusively). POSIX calls only, each failure an
/// `UploadFileError` with its errno.
struct UploadFiles: Sendable {
    /// `<data>/uploads`.
    let root: String

    /// Files under `dataDirectory/uploads`.
    init(dataDirectory: String) {
        root = (dataDirectory.hasSuffix("/") ? dataDirectory : dataDirectory + "/") + "uploads"
    }

    /// Creates the root directory (mode 0700) if it is missing.
    ///
    /// The corresponding C function is `mkdir`.
    func prepare() throws(UploadFileError) {
        try Self.makeDirectory(root)
    }

    func directory(of slot: String) -> String { "\(root)/\(slot)" }
    func path(of slot: String, _ filename: String) -> String { "\(root)/\(slot)/\(filename)" }
    func partPath(of slot: String) -> String { "\(root)/\(slot).part" }

    /// Whether the slot's file is complete (`uploads/<slot>/<name>` exists).
    ///
    /// The corresponding C function is `access`.
    func isComplete(_ slot: String, _ filename: String) -> Bool {
        access(path(of: slot, filename), F_OK) == 0
    }

    /// Creates the slot's part file for writing, exclusively (mode 0600).
    ///
    /// - Throws: `UploadFileError`; `EEXIST` when an upload to the slot is
    ///   in progress.
    /// The corresponding C function is `open`.
    func createPart(of slot: String) throws(UploadFileError) -> Int32 {
        let fd = open(partPath(of: slot), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UploadFileError("create the part file", errno: errno) }
        return fd
    }

    /// Makes the part file the slot's file: flushes it to disk, closes it,
    /// creates `uploads/<slot>/`, links the part file in under the file's
    /// name and removes the part's name, then flushes both directories, so
    /// that once this returns the file survives a power loss. Slow
    /// (`fsync`): call off the event loop.
    ///
    /// `link`, unlike `rename`, never replaces a file: a second upload that
    /// reaches this point for a completed slot fails with `EEXIST`, its
    /// part file removed, and the completed file stays as it was.
    ///
    /// - Throws: `UploadFileError`; `EEXIST` when the slot's file exists.
    /// The corresponding C functions are `fsync`, `close`, `mkdir`, `link`
    /// and `unlink`.
    func complete(_ slot: String, _ filename: String, descriptor: Int32) throws(UploadFileError) {
        let synced = fsync(descriptor) == 0 ? 0 : errno
        Self.closeDescriptor(descriptor)
        if synced != 0 { throw UploadFileError("flush the file to disk", errno: synced) }
        try Self.makeDirectory(directory(of: slot))
        let linked = link(partPath(of: slot), path(of: slot, filename)) == 0 ? 0 : errno
        unlink(partPath(of: slot))
        if linked != 0 { throw UploadFileError("move the file into place", errno: linked) }
        try Self.syncDirectory(directory(of: slot))
        try Self.syncDirectory(root)
    }

    /// Closes and deletes an unfinished upload's part file.
    ///
    /// The corresponding C functions are `close` and `unlink`.
    func discardPart(of slot: String, descriptor: Int32) {
        Self.closeDescriptor(descriptor)
        unlink(partPath(of: slot))
    }

    /// Opens the slot's file for reading.
    /// - Returns: The descriptor and the file's size, or nil if it is missing.
    ///
    /// The corresponding C functions are `open` and `fstat`.
    func openForReading(_ slot: String, _ filename: String) -> (descriptor: Int32, size: Int)? {
        let fd = open(path(of: slot, filename), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            Self.closeDescriptor(fd)
            return nil
        }
        return (fd, Int(status.st_size))
    }

    /// Deletes everything of `slot`: its directory with the file, and a
    /// part file. Missing pieces are fine.
    ///
    /// The corresponding C functions are `opendir`, `unlink` and `rmdir`.
    func remove(_ slot: String) {
        unlink(partPath(of: slot))
        let directory = directory(of: slot)
        for name in Self.entries(of: directory) { unlink("\(directory)/\(name)") }
        rmdir(directory)
    }

    /// The slot ids that have something on disk (a directory or a part
    /// file); names that are not slot ids are left alone.
    func slotsOnDisk() -> [String] {
        var slots: Set<String> = []
        for name in Self.entries(of: root) {
            let slot = name.hasSuffix(".part") ? String(name.dropLast(5)) : name
            if UploadSlotID.isValid(slot) { slots.insert(slot) }
        }
        return slots.sorted()
    }

    // MARK: - POSIX

    /// Writes all of `bytes` to `descriptor`.
    ///
    /// The corresponding C function is `write`.
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws(UploadFileError) {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw UploadFileError("write the file", errno: errno)
            }
            offset += written
        }
    }

    /// Reads up to `buffer.count` bytes; the count, 0 at the end, -1 on error.
    ///
    /// The corresponding C function is `read`.
    static func readSome(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0, errno == EINTR { continue }
            return count
        }
    }

    /// The corresponding C function is `close`.
    static func closeDescriptor(_ descriptor: Int32) {
        _ = close(descriptor)
    }

    /// Creates `path` with mode 0700; an existing directory is fine.
    ///
    /// The corresponding C function is `mkdir`.
    private static func makeDirectory(_ path: String) throws(UploadFileError) {
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw UploadFileError("create the directory \(path)", errno: errno)
        }
    }

    /// Flushes `directory`'s entries to disk: files created, linked or
    /// removed in it stay so after a crash.
    ///
    /// The corresponding C functions are `open` and `fsync`.
    private static func syncDirectory(_ directory: String) throws(UploadFileError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw UploadFileError("open the directory \(directory)", errno: errno) }
        let synced = fsync(fd) == 0 ? 0 : errno
        closeDescriptor(fd)
        if synced != 0 { throw UploadFileError("flush the directory \(directory) to disk", errno: synced) }
    }

    /// The names in `directory` but `.` and `..`; empty if it cannot be read.
    ///
    /// The corresponding C functions are `opendir`, `readdir` and `closedir`.
    private static func entries(of directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// A file operation of the upload store failed.
struct UploadFileError: Error, CustomStringConvertible {
    /// What was being done, such as `write the file`.
    let operation: String
    /// The `errno` it failed with.
    let errno: Int32

    init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// `cannot write the file: No space left on device`.
    var description: String {
        "cannot \(operation): \(String(cString: strerror(errno)))"
    }
}
