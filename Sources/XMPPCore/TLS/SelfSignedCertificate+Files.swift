import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A certificate and key on disk, as ``SelfSignedCertificate/loadOrCreate(domain:directory:)``
/// found or wrote them.
public struct CertificateFiles: Sendable, Hashable {
    /// The PEM certificate, `<directory>/<domain>.crt`, mode 0644 when created.
    public let certificatePath: String
    /// The PEM private key, `<directory>/<domain>.key`, mode 0600 when created.
    public let privateKeyPath: String
    /// The certificate's SHA-256 fingerprint, for the server to log at start.
    public let fingerprint: CertificateFingerprint
    /// Whether this call generated the files (rather than reusing them).
    public let wasCreated: Bool

    /// The files as a server certificate source.
    public var source: TLSCertificateSource {
        .pemFiles(certificateChainPath: certificatePath, privateKeyPath: privateKeyPath)
    }
}

extension SelfSignedCertificate {
    /// Returns the certificate and key for `domain` in `directory`, generating
    /// them first (with ``generate(domain:)``) if neither exists.
    ///
    /// Existing files are reused as they are, never overwritten: an
    /// administrator may have replaced them with a real certificate. Creating
    /// `directory` (mode 0700) needs its parent to exist. The key file is
    /// created with mode 0600 whatever the umask, and no file is left
    /// half-written.
    ///
    /// - Throws: `TLSError` (`.invalidConfiguration`) for an invalid domain,
    ///   when only one of the two files exists, when the certificate cannot be
    ///   read, or when a file cannot be written.
    ///
    /// The corresponding C functions are `mkdir`, `open` with `O_EXCL`,
    /// `fchmod`, `write` and `fsync`.
    public static func loadOrCreate(domain: String, directory: String) throws(TLSError)
        -> CertificateFiles
    {
        // Checked first: the domain becomes part of the file names.
        _ = try subjectAltName(for: domain)
        let certificatePath = directory + "/" + domain + ".crt"
        let keyPath = directory + "/" + domain + ".key"
        switch (access(certificatePath, F_OK) == 0, access(keyPath, F_OK) == 0) {
        case (true, true):
            let certificate = try X509Certificates.readFirst(path: certificatePath)
            defer { X509_free(certificate) }
            return CertificateFiles(
                certificatePath: certificatePath, privateKeyPath: keyPath,
                fingerprint: CertificateFingerprint(certificate: certificate), wasCreated: false)
        case (false, false):
            if mkdir(directory, 0o700) != 0, errno != EEXIST {
                throw PEMFiles.systemError("cannot create directory \(directory)")
            }
            let generated = try generate(domain: domain)
            try PEMFiles.writeNew(keyPath, generated.privateKeyPEM, mode: 0o600)
            do {
                try PEMFiles.writeNew(certificatePath, generated.certificatePEM, mode: 0o644)
            } catch {
                unlink(keyPath)
                throw error
            }
            return CertificateFiles(
                certificatePath: certificatePath, privateKeyPath: keyPath,
                fingerprint: generated.fingerprint, wasCreated: true)
        case (true, false), (false, true):
            throw TLSError(
                .invalidConfiguration,
                "found only one of \(certificatePath) and \(keyPath); provide the other or remove it"
            )
        }
    }
}

/// Writing the PEM files of certificates and keys: created with exactly
/// their mode whatever the umask, synced, and never left half-written.
enum PEMFiles {
    /// Creates `path`, which must not exist, with exactly `mode`, and writes
    /// `contents` to disk; removes it again if anything fails.
    static func writeNew(_ path: String, _ contents: String, mode: mode_t)
        throws(TLSError)
    {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw systemError("cannot create \(path)") }
        var failure: TLSError?
        // The umask can only clear bits, but be exact about a key's mode.
        if fchmod(descriptor, mode) != 0 { failure = systemError("cannot set the mode of \(path)") }
        var bytes = Array(contents.utf8)[...]
        while failure == nil, !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if errno != EINTR {
                failure = systemError("cannot write \(path)")
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = systemError("cannot sync \(path)") }
        close(descriptor)
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// An error naming `what` failed and why, from `errno`.
    static func systemError(_ what: String) -> TLSError {
        TLSError(.invalidConfiguration, "\(what): \(String(cString: strerror(errno)))")
    }

    /// Replaces `path` (or creates it) with `contents` and `mode`, through
    /// a new file renamed over it, so a reader sees the old or the new one.
    static func replace(_ path: String, _ contents: String, mode: mode_t) throws(TLSError) {
        let temporary = path + ".new"
        unlink(temporary)
        try writeNew(temporary, contents, mode: mode)
        guard rename(temporary, path) == 0 else {
            let error = systemError("cannot replace \(path)")
            unlink(temporary)
            throw error
        }
    }
}
