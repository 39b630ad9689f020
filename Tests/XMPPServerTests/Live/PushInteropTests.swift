import Testing
import XMPPServer

/// Interop of XEP-0357 push notifications with slixmpp, against a live
/// in-process server whose push service is a slixmpp `ComponentXMPP`
/// (XEP-0114) on a component listener at `127.0.0.1:0`:
/// `tools/interop/push_interop.py` has a slixmpp client with resumable
/// stream management (XEP-0198) enable push with publish options, drop its
/// connection, get a message announced to the component, resume, disable
/// push and get the next message announced to nobody.
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1`, which makes a missing slixmpp a failure
/// (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct PushInteropTests {
    static let scriptTimeout = 50.0

    @Test(.enabled(if: SlixmppInteropTests.slixmpp.shouldRun, "slixmpp is not installed: pip install slixmpp"))
    func pushScriptPasses() throws {
        guard PythonInterop.requireAvailable(SlixmppInteropTests.slixmpp) else { return }
        let secret = "push-interop-secret"
        try LiveServer.run(configure: { config in
            config.components.listen = [ListenAddress("127.0.0.1:0")!]
            config.components.services = [ServerConfig.Component(domain: "push.localhost", secret: secret)]
        }) { server in
            let port = try #require(server.server.componentAddresses.first).port
            let outcome = try PythonInterop.run(
                "push_interop.py", against: server, arguments: [String(port), "push.localhost", secret],
                timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "push_interop.py", lastLine: "ok   all push interop steps passed",
                timeout: Self.scriptTimeout)
            #expect(!server.log.lines.contains { $0.contains(secret) })
            // The publish options' secret (random, `push-secret-…`, made by
            // the script) is for the push service only: the script checks
            // that it reached the component; it must not reach the log.
            #expect(!server.log.lines.contains { $0.contains("push-secret-") }, "\(server.log.lines)")
        }
    }
}
