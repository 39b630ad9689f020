import Testing
import XMPPNet
import XMPPServer

/// XMPP over WebSocket on a live in-process server, driven by
/// `tools/interop/websocket_interop.py` over the `websockets` package (a
/// generic WebSocket client): discovery, registration, SCRAM over ws://
/// and PLAIN over wss://, roster, stream management, a message, MAM, and
/// the framing edge cases of browser clients; and XEP-0156 discovery
/// naming `websocket_url` when it is set.
///
/// Skipped when `python3 -c "import websockets"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// library a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(2)))
struct WebSocketInteropTests {
    static let scriptTimeout = 90.0
    static let libraries = PythonInterop.probe(["websockets"])

    @Test func hostMetaNamesTheConfiguredURLAlone() throws {
        try LiveServer.run(configure: { config in
            config.http.webSocketURL = "wss://chat.example.org/xmpp-websocket"
        }) { server in
            let reply = try LiveHTTPClient.exchange(
                server.server.httpAddresses[0], "GET", "/.well-known/host-meta.json")
            #expect(reply.status == 200)
            #expect(
                String(decoding: reply.body, as: UTF8.self)
                    == #"{"links":[{"rel":"urn:xmpp:alt-connections:websocket","href":"wss://chat.example.org/xmpp-websocket"}]}"#
                    + "\n")
        }
    }

    @Test(
        .enabled(
            if: libraries.shouldRun,
            """
            websockets is not installed (python3 -c 'import websockets' failed): pip install websockets, \
            or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """))
    func webSocketScriptPasses() throws {
        guard PythonInterop.requireAvailable(Self.libraries) else { return }
        try LiveServer.run(configure: { config in
            config.http.tlsListen = [ListenAddress("127.0.0.1:0")!]
        }) { server in
            let http = server.server.httpAddresses
            let outcome = try PythonInterop.run(
                "websocket_interop.py", against: server, arguments: [String(http[0].port), String(http[1].port)],
                timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "websocket_interop.py", lastLine: "ok   all WebSocket interop steps passed",
                timeout: Self.scriptTimeout)
        }
    }
}
