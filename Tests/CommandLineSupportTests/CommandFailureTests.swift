import TerminalSupport
import Testing
import XMPPClient
import XMPPCore
@testable import CommandLineSupport

/// The one mapping from errors to exit statuses.
@Suite struct CommandFailureTests {
    @Test func clientErrors() {
        let table: [(XMPPClientError, TerminalSupport.ExitStatus)] = [
            (.cannotConnect("refused"), .cannotConnect), (.timedOut, .cannotConnect), (.notConnected, .cannotConnect),
            (.tls("bad certificate"), .tls), (.notAuthorized, .notAuthorized),
            (.streamError(.notAuthorized, text: nil), .notAuthorized), (.registrationConflict, .registrationConflict),
            (.registrationNotAllowed("closed"), .refused), (.unsupportedServer("no TLS"), .refused),
            (.streamError(.conflict, text: nil), .refused), (.stanzaError(.serviceUnavailable, text: nil), .refused),
            (.invalidRequest("yourself"), .badData), (.storage("disk full"), .localFile),
        ]
        for (error, status) in table {
            let failure = CommandFailure(error)
            #expect(failure.status == status, "\(error)")
            #expect(failure.message == error.description)
        }
    }

    @Test func savedCredentialErrorsSayWhatToDo() {
        #expect(CommandFailure(SavedCredentialsError.notFound(path: "/p")).status == .noAccount)
        #expect(CommandFailure(SavedCredentialsError.insecureFile(path: "/p", mode: 0o644)).status == .noAccount)
        #expect(CommandFailure(SavedCredentialsError.malformed(path: "/p", reason: "x")).status == .noAccount)
        #expect(CommandFailure(SavedCredentialsError.cannotWrite(path: "/p", reason: "x")).status == .localFile)
    }

    @Test func otherErrors() {
        struct Surprise: Error {}
        #expect(CommandFailure(PasswordInputError("no password on standard input")).status == .badData)
        #expect(CommandFailure(Surprise()).status == .internalError)
        let failure = CommandFailure(.usage, "x")
        #expect(CommandFailure(failure) == failure)
        #expect(failure.prefixed("bob").message == "bob: x")
    }

    @Test func theHelpListsTheStatuses() {
        #expect(Help.main.contains(TerminalSupport.ExitStatus.table))
    }
}
