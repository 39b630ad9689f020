import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

/// `/metrics` of a real `swiftletd` process (configured by file, with a
/// token), read and parsed by the Prometheus Python client's OpenMetrics
/// parser (`tools/interop/metrics_interop.py`) before and after logins,
/// a failed login and messages.
///
/// Skipped without `prometheus_client` unless `SWIFTLET_REQUIRE_INTEROP=1`
/// (as CI sets it), which makes a missing library a failure.
@Suite(.timeLimit(.minutes(2)))
struct MetricsInteropTests {
    /// How long each run of the script may take; it polls for at most 10 s.
    static let scriptTimeout = 60.0
    static let token = "5f3c9a0e7b2d4c6f8a1e3b5d7f9c0a2e"

    static let libraries = PythonInterop.probe(["prometheus_client"])

    @Test(
        .enabled(
            if: libraries.shouldRun,
            """
            prometheus_client is not installed (python3 -c 'import prometheus_client' failed): \
            pip install prometheus_client, or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """))
    func countsParseAndChangeAsExpected() throws {
        guard PythonInterop.requireAvailable(Self.libraries) else { return }
        let dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-metrics-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        for name in ["alice", "bob", "carol"] {
            try SwiftletdProcess.addUser(name, password: "\(name)-password", dataDirectory: dataDirectory)
        }
        let configPath = "\(dataDirectory)/swiftletd.conf"
        let config = "metrics = yes\nmetrics_token = \(Self.token)\n"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let server = try SwiftletdProcess(dataDirectory: dataDirectory, arguments: ["--config", configPath])
        defer { server.kill() }
        #expect(!server.output.contains(Self.token), "the token is never logged")
        let httpLine = server.output.split(separator: "\n").first { $0.contains("HTTP on 127.0.0.1:") }
        let httpPort = try #require(httpLine?.split(separator: "127.0.0.1:").last?.prefix { $0.isNumber })
        let state = "\(dataDirectory)/metrics-before.json"

        func script(_ arguments: [String]) throws {
            let outcome = try PythonInterop.run(
                "metrics_interop.py", at: server.address, trusting: "\(dataDirectory)/tls/localhost-ca.crt",
                arguments: [String(httpPort), Self.token, state] + arguments, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "metrics_interop.py \(arguments[0])",
                lastLine: arguments[0] == "before" ? "parsed by prometheus_client" : "ok   metrics interop passed",
                timeout: Self.scriptTimeout)
        }

        try script(["before"])
        let alice = try server.connectWithTLS()
        try alice.login("alice", "alice-password")
        let bob = try server.connectWithTLS()
        try bob.login("bob", "bob-password")
        let guesser = try server.connectWithTLS()
        #expect(try guesser.authenticate("bob", "guess", mechanism: .scramSHA256).name == "failure")
        for number in 1...3 {
            try alice.send(
                "<message to='bob@localhost/live' type='chat' id='m\(number)'><body>hi \(number)</body></message>")
            #expect(try bob.nextElement()[attribute: "id"] == "m\(number)")
        }
        try alice.send("<message to='carol@localhost' type='chat' id='c1'><body>for later</body></message>")
        // LOGINS FAILURES MESSAGES DELIVERED SESSIONS OFFLINE
        try script(["after", "2", "1", "3", "3", "2", "1"])
    }
}
