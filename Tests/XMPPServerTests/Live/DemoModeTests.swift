import Foundation
import Testing
import XMPPNet
import XMPPTestSupport

/// `swiftletd demo`, run as the real executable: a third-party client logs
/// in as two demo users, they exchange a message and talk in the demo's
/// room; a temporary data directory is gone once the demo stops.
@Suite(.timeLimit(.minutes(1)))
struct DemoModeTests {
    static let slixmpp = PythonInterop.probe(["slixmpp"])
    static let timeout = 60.0

    /// Starts `swiftletd demo` with `arguments`; returns it with its address.
    private func startDemo(_ arguments: [String]) throws -> (ChildProcess, SocketAddress) {
        let child = try ChildProcess(
            try ChildProcess.builtExecutable("swiftletd"), ["demo", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--https-listen", "127.0.0.1:0"] + arguments)
        let line = try child.waitForLine(containing: "Listening on: ", timeout: Self.timeout)
        let text = line.split(separator: "Listening on: ").last.map(String.init) ?? ""
        guard let address = SocketAddress(text.trimmingCharacters(in: .whitespaces)) else {
            throw TestFailure("no address in '\(line)'")
        }
        return (child, address)
    }

    @Test(.enabled(if: slixmpp.shouldRun, "slixmpp is not installed: pip install slixmpp"))
    func slixmppUsersChatOnTheDemo() throws {
        guard PythonInterop.requireAvailable(Self.slixmpp) else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-demo-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (demo, address) = try startDemo(["--data-dir", directory])
        defer { _ = demo.wait(timeout: 0) }
        #expect(demo.output.contains("alice@localhost"))
        #expect(demo.output.contains("password \"swiftlet\""))
        #expect(demo.output.contains("lobby@conference.localhost"))
        #expect(demo.output.contains("Web chat, to be the other person: http://127.0.0.1:"))
        #expect(demo.output.contains("xcrun simctl keychain booted add-root-cert \(directory)/tls/localhost-ca.crt"))
        let outcome = try PythonInterop.run(
            "demo_interop.py", at: address, trusting: "\(directory)/tls/localhost-ca.crt", timeout: Self.timeout)
        PythonInterop.expectPassed(
            outcome, "demo_interop.py", lastLine: "ok   what bob says in the lobby reaches alice", timeout: Self.timeout)
    }

    @Test func temporaryDataIsRemovedWhenTheDemoStops() throws {
        let (demo, _) = try startDemo([])
        let line = try demo.waitForLine(containing: "(temporary", timeout: Self.timeout)
        let path = try #require(line.split(separator: " ").dropFirst().first.map(String.init))
        #expect(FileManager.default.fileExists(atPath: path))
        let outcome = demo.wait(timeout: 0)
        #expect(outcome.output.contains("stopped"))
        #expect(!FileManager.default.fileExists(atPath: path), "left \(path) behind")
    }
}
