import Foundation
import XMPPClient
import XMPPTestSupport

/// The built `swiftlet` for one user of a test: a home directory of its
/// own (removed with `cleanUp()`), and the fixture server's address and
/// pinned certificate on every command line.
struct SwiftletRunner {
    /// The longest any one command may take before the test fails.
    static let commandTimeout = 10.0

    let home: String
    /// The options naming the server and its certificate.
    private(set) var connection: [String]

    /// A user of `server` with a fresh home.
    init(_ server: ServerFixture?) {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-cli-\(UUID().uuidString)").path
        connection =
            server.map {
                ["--server", "\($0.address.ipString):\($0.address.port)", "--tls", ClientTLSPolicy.pinned($0.fingerprint).description]
            } ?? []
    }

    /// The same user (same home) with other connection options: `[]` to
    /// use what login saved.
    func connecting(with options: [String]) -> SwiftletRunner {
        var user = self
        user.connection = options
        return user
    }

    /// The arguments of a command: `arguments`, the home, the server.
    func commandLine(_ arguments: [String]) -> [String] {
        arguments + ["--home", home] + connection
    }

    /// Runs `swiftlet` to the end; returns how it ended.
    /// - Throws: `TestFailure` if it does not end within `commandTimeout`.
    @discardableResult
    func run(_ arguments: [String], input: String = "") throws -> ChildProcess.Outcome {
        let child = try ChildProcess(try ChildProcess.builtExecutable("swiftlet"), commandLine(arguments), input: input)
        let outcome = child.wait(timeout: Self.commandTimeout)
        guard !outcome.timedOut else {
            throw TestFailure("swiftlet \(arguments) did not end in \(Self.commandTimeout) s:\n\(outcome.output)")
        }
        return outcome
    }

    /// Runs `swiftlet` and requires exit status 0; returns its output.
    @discardableResult
    func succeed(_ arguments: [String], input: String = "") throws -> String {
        let outcome = try run(arguments, input: input)
        guard outcome.status == 0 else {
            throw TestFailure("swiftlet \(arguments) exited with \(outcome.status):\n\(outcome.output)")
        }
        return outcome.output
    }

    /// Starts `swiftlet` in the background.
    func start(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(try ChildProcess.builtExecutable("swiftlet"), commandLine(arguments))
    }

    /// Deletes the home directory.
    func cleanUp() {
        try? FileManager.default.removeItem(atPath: home)
    }
}
