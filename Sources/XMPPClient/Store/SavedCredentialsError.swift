/// Why saved credentials could not be written or read back.
public enum SavedCredentialsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no file at the path: the user has not logged in yet.
    case notFound(path: String)
    /// The file exists but cannot be opened or read, or is not a regular file.
    case cannotRead(path: String, reason: String)
    /// The file (or its directory) cannot be created, written or renamed.
    case cannotWrite(path: String, reason: String)
    /// Group or others may access the file (its permissions, `mode`, have
    /// bits in 0o077): the keys may have leaked, so it is not used.
    case insecureFile(path: String, mode: UInt32)
    /// The file is not valid saved credentials.
    case malformed(path: String, reason: String)

    public var description: String {
        switch self {
        case .notFound(let path):
            "no saved credentials at \(path); log in first"
        case .cannotRead(let path, let reason):
            "cannot read saved credentials at \(path): \(reason)"
        case .cannotWrite(let path, let reason):
            "cannot save credentials at \(path): \(reason)"
        case .insecureFile(let path, let mode):
            "refusing saved credentials at \(path): mode \(String(mode, radix: 8)) lets others "
                + "read them; log in again to write them with mode 600"
        case .malformed(let path, let reason):
            "saved credentials at \(path) are damaged: \(reason)"
        }
    }
}
