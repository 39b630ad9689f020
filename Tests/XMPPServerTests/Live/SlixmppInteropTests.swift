import Foundation
import Synchronization
import Testing

/// Interop with slixmpp, a third-party Python XMPP library: runs
/// `tools/interop/slixmpp_basic.py` (registration, SCRAM-SHA-256 over
/// STARTTLS with the certificate verified, bind, ping, disco, a wrong
/// password, SCRAM-SHA-1 without TLS, a taken username) against a live
/// in-process server.
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// slixmpp a failure.
@Suite(.timeLimit(.minutes(1)))
struct SlixmppInteropTests {
    /// How long the script may run; it takes about a second, and each of
    /// its steps has a 20 s deadline of its own.
    static let scriptTimeout = 45.0

    /// Whether CI demands the interop check.
    static let required = ProcessInfo.processInfo.environment["SWIFTLET_REQUIRE_INTEROP"] == "1"

    /// Whether slixmpp can be imported, and what Python said if not.
    static let slixmpp: (available: Bool, output: String) = {
        guard let result = try? runPython(["-c", "import slixmpp"], timeout: 30) else {
            return (false, "python3 could not be started")
        }
        return (result.status == 0, result.output)
    }()

    /// The repository root, three levels above this file's directory.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test(.enabled(
        if: slixmpp.available || required,
        """
        slixmpp is not installed (python3 -c 'import slixmpp' failed): pip install slixmpp, \
        or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
        """))
    func slixmppBasicScriptPasses() throws {
        guard Self.slixmpp.available else {
            Issue.record("SWIFTLET_REQUIRE_INTEROP=1 but slixmpp cannot be imported:\n\(Self.slixmpp.output)")
            return
        }
        let script = Self.repositoryRoot.appendingPathComponent("tools/interop/slixmpp_basic.py").path
        try LiveServer.run { server in
            let address = server.ipv4
            let result = try Self.runPython(
                [script, address.ipString, String(address.port), "localhost", server.certificatePath],
                timeout: Self.scriptTimeout)
            #expect(!result.timedOut, "slixmpp_basic.py ran longer than \(Self.scriptTimeout) s:\n\(result.output)")
            #expect(result.status == 0, "slixmpp_basic.py exited with \(result.status):\n\(result.output)")
            if result.status == 0 {
                // Guards against a script that exits 0 before its last step.
                #expect(result.output.contains("ok   registering a taken name is a conflict"), "\(result.output)")
            }
        }
    }

    /// What a finished (or killed) process left.
    struct ProcessResult {
        var status: Int32
        var timedOut: Bool
        /// Standard output and standard error, interleaved.
        var output: String
    }

    /// Runs `python3` with `arguments`, killing it after `timeout` seconds.
    static func runPython(_ arguments: [String], timeout: Double) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.currentDirectoryURL = repositoryRoot
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        // Read while it runs, so a chatty process never blocks on a full pipe.
        let output = Mutex(Data())
        let drained = DispatchSemaphore(value: 0)
        try process.run()
        Thread.detachNewThread {
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            output.withLock { $0 = data }
            drained.signal()
        }
        let timedOut = exited.wait(timeout: .now() + timeout) == .timedOut
        if timedOut {
            process.terminate()
            exited.wait()
        }
        drained.wait()
        let text = output.withLock { String(decoding: $0, as: UTF8.self) }
        return ProcessResult(status: process.terminationStatus, timedOut: timedOut, output: text)
    }
}
