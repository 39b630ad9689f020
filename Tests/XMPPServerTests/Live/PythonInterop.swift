import Foundation
import Testing
import XMPPNet
import XMPPTestSupport

/// Runs the Python interop scripts of `tools/interop` (third-party XMPP
/// libraries) against a live in-process server.
///
/// Every script takes `HOST PORT DOMAIN CA_CERTIFICATE` and then its own
/// arguments, prints one `ok   …` or `FAIL …` line per step and exits
/// non-zero on the first failure.
///
/// A test that needs Python libraries is skipped when `python3` cannot
/// import them, unless `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which
/// makes a missing library a failure.
enum PythonInterop {
    /// Whether CI demands the interop checks.
    static let required = ProcessInfo.processInfo.environment["SWIFTLET_REQUIRE_INTEROP"] == "1"

    /// Whether `python3` can import `modules`, and what it said.
    struct Libraries {
        var available: Bool
        var output: String
        /// For `.enabled(if:)`: run when available or when CI requires it.
        var shouldRun: Bool { available || PythonInterop.required }
    }

    /// nbxmpp, Gajim's library, with PyGObject and libsoup 3's typelib.
    static let nbxmpp = probe(["gi", "nbxmpp"])
    /// Why a test of nbxmpp is skipped, and what to install.
    static let nbxmppMissing: Comment = """
        nbxmpp is not installed (python3 -c 'import gi, nbxmpp' failed): apt-get install \
        gir1.2-soup-3.0 libgirepository1.0-dev libcairo2-dev, pip install 'PyGObject<3.51' nbxmpp, \
        or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
        """

    /// Asks `python3` to import every module in `modules`.
    static func probe(_ modules: [String]) -> Libraries {
        guard let child = try? python(["-c", "import " + modules.joined(separator: ", ")]) else {
            return Libraries(available: false, output: "python3 could not be started")
        }
        let outcome = child.wait(timeout: 30)
        return Libraries(available: outcome.status == 0 && !outcome.timedOut, output: outcome.output)
    }

    /// Runs `tools/interop/<script>` against `server`'s IPv4 listener,
    /// trusting its certificate, with `arguments` after the usual four;
    /// ends it after `timeout` seconds.
    static func run(
        _ script: String, against server: LiveServer, arguments: [String] = [], timeout: Double
    ) throws -> ChildProcess.Outcome {
        try run(script, at: server.ipv4, trusting: server.certificatePath, arguments: arguments, timeout: timeout)
    }

    /// Runs `tools/interop/<script>` against the server at `address`
    /// (domain `localhost`) whose certificate is at `certificatePath`.
    static func run(
        _ script: String, at address: SocketAddress, trusting certificatePath: String, arguments: [String] = [],
        timeout: Double
    ) throws -> ChildProcess.Outcome {
        let path = ChildProcess.repositoryRoot.appendingPathComponent("tools/interop/\(script)").path
        let common = [path, address.ipString, String(address.port), "localhost", certificatePath]
        return try python(common + arguments).wait(timeout: timeout)
    }

    /// Expects `outcome` to be a script that ran to its end: in time,
    /// exit status 0, and `lastLine` printed (which guards against a
    /// script that exits 0 before its last step).
    static func expectPassed(
        _ outcome: ChildProcess.Outcome, _ script: String, lastLine: String, timeout: Double,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!outcome.timedOut, "\(script) ran longer than \(timeout) s:\n\(outcome.output)",
                sourceLocation: sourceLocation)
        #expect(outcome.status == 0, "\(script) exited with \(outcome.status):\n\(outcome.output)",
                sourceLocation: sourceLocation)
        if outcome.status == 0 {
            #expect(outcome.output.contains(lastLine), "\(outcome.output)", sourceLocation: sourceLocation)
        }
    }

    /// Expects `server` to have logged the upload a script reports in its
    /// `ok   upload: SIZE bytes, https://…` line: a slot for SIZE bytes,
    /// then the PUT completed.
    static func expectUploadLogged(
        _ outcome: ChildProcess.Outcome, size: Int, by server: LiveServer,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let log = server.log.lines
        let prefix = "ok   upload: \(size) bytes, https://"
        let line = try #require(
            outcome.output.split(separator: "\n").first { $0.hasPrefix(prefix) }, sourceLocation: sourceLocation)
        let url = try #require(line.split(separator: " ").first { $0.hasPrefix("https://") }, sourceLocation: sourceLocation)
        let slot = try #require(
            url.components(separatedBy: "/upload/").last?.split(separator: "/").first, sourceLocation: sourceLocation)
        #expect(
            log.contains { $0.contains("upload slot \(slot) for \(size) bytes") }, "\(log.joined(separator: "\n"))",
            sourceLocation: sourceLocation)
        #expect(
            log.contains { $0.contains("upload to slot \(slot) complete") }, "\(log.joined(separator: "\n"))",
            sourceLocation: sourceLocation)
    }

    /// Records why a test that had to run cannot: the libraries are
    /// missing though CI requires them. Returns whether they are there.
    static func requireAvailable(_ libraries: Libraries, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        guard !libraries.available else { return true }
        Issue.record(
            "SWIFTLET_REQUIRE_INTEROP=1 but the Python libraries cannot be imported:\n\(libraries.output)",
            sourceLocation: sourceLocation)
        return false
    }

    /// `python3` with `arguments`, from the repository root.
    private static func python(_ arguments: [String]) throws -> ChildProcess {
        try ChildProcess("/usr/bin/env", ["python3"] + arguments, directory: ChildProcess.repositoryRoot)
    }
}
