/// How `swiftlet` and `swiftletd` end, so that a script can tell a typo
/// from a wrong password from a server that is down. The numbers are BSD's
/// sysexits.h codes for the same kind of failure.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Done.
    case success = 0
    /// The command line is wrong: unknown command or option, missing or
    /// extra operands, a malformed option value (`EX_USAGE`).
    case usage = 64
    /// An operand or input is not valid: a malformed JID, no password on
    /// standard input, text XML cannot carry (`EX_DATAERR`).
    case badData = 65
    /// No usable saved account: nobody logged in yet, or the account file
    /// is damaged or readable by others; run `swiftlet login` (`EX_NOINPUT`).
    case noAccount = 66
    /// The server cannot be reached, did not answer in time, or the
    /// connection was lost (`EX_NOHOST`).
    case cannotConnect = 68
    /// The server refused: a stream or stanza error, a recipient that does
    /// not exist, registration closed, no usable login mechanism
    /// (`EX_UNAVAILABLE`).
    case refused = 69
    /// A bug in swiftlet (`EX_SOFTWARE`).
    case internalError = 70
    /// Registration: that username is taken (`EX_CANTCREAT`).
    case registrationConflict = 73
    /// A local file (account file, archive) cannot be read or written
    /// (`EX_IOERR`); for `swiftletd`, the server or its database cannot
    /// start.
    case localFile = 74
    /// TLS failed: the certificate is not trusted or does not match the
    /// pinned fingerprint, or the handshake broke (`EX_TEMPFAIL`).
    case tls = 75
    /// Wrong username or password, or saved keys the server no longer
    /// accepts (`EX_NOPERM`).
    case notAuthorized = 77

    /// One line per status for `swiftlet --help`.
    public static var table: String {
        allCases.map { status in
            let code = String(status.rawValue)
            return "  " + code + String(repeating: " ", count: 5 - code.count) + status.meaning
        }.joined(separator: "\n")
    }

    /// A few words on when this status is used.
    var meaning: String {
        switch self {
        case .success: "success"
        case .usage: "usage error: unknown command or option, wrong operands"
        case .badData: "bad data: a malformed JID, no password on standard input"
        case .noAccount: "no usable saved account: run 'swiftlet login JID'"
        case .cannotConnect: "cannot reach the server, it did not answer in time, or the connection was lost"
        case .refused: "the server refused (stream or stanza error, registration closed)"
        case .internalError: "internal error"
        case .registrationConflict: "registration: the username is taken"
        case .localFile: "a local file cannot be read or written"
        case .tls: "TLS failed: certificate not trusted or not the pinned one"
        case .notAuthorized: "not authorized: wrong username or password"
        }
    }
}
