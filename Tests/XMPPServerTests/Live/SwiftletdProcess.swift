import Foundation
import XMPPNet
import XMPPTestSupport

/// The real `swiftletd` executable, run as a child process on a data
/// directory the test owns and listening on `127.0.0.1:0`: for tests that
/// must kill the server for real, as an in-process `Server` cannot be.
///
/// The executable is the one `swift test` built next to the test bundle.
final class SwiftletdProcess {
    /// The longest the daemon may take to start listening.
    static let startTimeout = 30.0

    private let child: ChildProcess
    /// Where it listens; the port is the one the kernel picked.
    let address: SocketAddress
    /// The certificate it generated in its data directory, trusted by clients.
    let certificatePEM: String

    /// Starts `swiftletd` on `dataDirectory`, with `arguments` after the
    /// listeners and the data directory (`--config FILE`), and waits for
    /// its "listening on 127.0.0.1:PORT" log line.
    /// - Throws: `TestFailure` (with the daemon's output) if it does not
    ///   start listening within `startTimeout`.
    init(dataDirectory: String, arguments: [String] = []) throws {
        child = try ChildProcess(
            try Self.executable(),
            ["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--https-listen", "127.0.0.1:0", "--data-dir", dataDirectory] + arguments)
        let line = try child.waitForLine(containing: "listening on 127.0.0.1:", timeout: Self.startTimeout)
        let text = line.split(separator: "listening on ").last?.split(separator: " ").first.map(String.init)
        guard let text, let address = SocketAddress(text) else {
            throw TestFailure("no address in the log line '\(line)'")
        }
        self.address = address
        certificatePEM = try String(contentsOfFile: "\(dataDirectory)/tls/localhost-ca.crt", encoding: .utf8)
    }

    /// Creates an account with `swiftletd adduser NAME --data-dir DIR`,
    /// the password on standard input.
    /// - Throws: `TestFailure` with its output unless it exits 0 in time.
    static func addUser(_ name: String, password: String, dataDirectory: String) throws {
        let child = try ChildProcess(
            try executable(), ["adduser", name, "--data-dir", dataDirectory], input: password + "\n")
        let outcome = child.wait(timeout: startTimeout)
        guard outcome.status == 0, !outcome.timedOut else {
            throw TestFailure("swiftletd adduser \(name) exited with \(outcome.status):\n\(outcome.output)")
        }
    }

    /// A new connection with a stream secured by STARTTLS, nothing more.
    func connectWithTLS() throws -> LiveClient {
        let client = try LiveClient(connectingTo: address, domain: "localhost")
        try client.openStream()
        try client.startTLS(trusting: certificatePEM)
        return client
    }

    /// Everything the daemon logged so far.
    var output: String { child.output }

    /// Kills the daemon with `SIGKILL` and waits until it is gone; returns
    /// its output.
    @discardableResult
    func kill() -> String {
        child.kill().output
    }

    /// The `swiftletd` built with the tests: next to the test binary (the
    /// build directory, whatever `--scratch-path` said), else in the
    /// repository's `.build/debug`.
    /// - Throws: `TestFailure` if neither exists.
    static func executable() throws -> String {
        try ChildProcess.builtExecutable("swiftletd")
    }
}
