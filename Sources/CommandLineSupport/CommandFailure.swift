import TerminalSupport
import XMPPClient
import XMPPCore

/// Why a `swiftlet` command failed: the one-line message printed after
/// `swiftlet: ` on standard error, and the exit status.
///
/// `init(_:)` is the one place that turns the errors of the libraries
/// below into text and a status.
public struct CommandFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The exit status.
    public let status: ExitStatus
    /// What went wrong, in one line.
    public let message: String

    /// A failure with this status and message.
    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A usage error with this message.
    public static func usage(_ message: String) -> CommandFailure {
        CommandFailure(.usage, message)
    }

    public var description: String { message }

    /// The same failure with `context: ` before the message.
    public func prefixed(_ context: String) -> CommandFailure {
        CommandFailure(status, "\(context): \(message)")
    }

    /// The failure for any error a command meets; an error of an unknown
    /// kind is an internal error.
    public init(_ error: any Error) {
        switch error {
        case let failure as CommandFailure:
            self = failure
        case let error as XMPPClientError:
            self.init(Self.status(of: error), error.description)
        case let error as SavedCredentialsError:
            switch error {
            case .notFound, .insecureFile, .malformed: self.init(.noAccount, error.description)
            case .cannotRead, .cannotWrite: self.init(.localFile, error.description)
            }
        case let error as PasswordInputError:
            self.init(.badData, error.description)
        default:
            self.init(.internalError, "\(error)")
        }
    }

    /// The exit status for a client error.
    static func status(of error: XMPPClientError) -> ExitStatus {
        switch error {
        case .cannotConnect, .timedOut, .notConnected: .cannotConnect
        case .tls: .tls
        case .notAuthorized, .streamError(.notAuthorized, _): .notAuthorized
        case .registrationConflict: .registrationConflict
        case .unsupportedServer, .registrationNotAllowed, .streamError, .stanzaError: .refused
        case .invalidRequest: .badData
        case .storage: .localFile
        }
    }
}
