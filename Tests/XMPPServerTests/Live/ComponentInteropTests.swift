import Testing
import XMPPServer

/// Interop with slixmpp's `ComponentXMPP` (XEP-0114) against a live
/// in-process server with a component listener on `127.0.0.1:0`:
/// `tools/interop/component_interop.py` connects an echo component, checks
/// that a wrong secret is refused, and has a slixmpp client message it,
/// query it and be pinged by it.
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1`, which makes a missing slixmpp a failure
/// (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct ComponentInteropTests {
    static let scriptTimeout = 45.0

    @Test(.enabled(if: SlixmppInteropTests.slixmpp.shouldRun, "slixmpp is not installed: pip install slixmpp"))
    func componentScriptPasses() throws {
        guard PythonInterop.requireAvailable(SlixmppInteropTests.slixmpp) else { return }
        let secret = "interop-secret"
        try LiveServer.run(configure: { config in
            config.components.listen = [ListenAddress("127.0.0.1:0")!]
            config.components.services = [ServerConfig.Component(domain: "echo.localhost", secret: secret)]
        }) { server in
            let port = try #require(server.server.componentAddresses.first).port
            let outcome = try PythonInterop.run(
                "component_interop.py", against: server, arguments: [String(port), "echo.localhost", secret],
                timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "component_interop.py", lastLine: "ok   all component interop steps passed",
                timeout: Self.scriptTimeout)
            #expect(!server.log.lines.contains { $0.contains(secret) })
        }
    }
}
