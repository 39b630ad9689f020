import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// The opening handshake at `/xmpp-websocket` (RFC 6455 §4.2, RFC 7395
/// §3.1) and XEP-0156 discovery, through an in-memory HTTP connection.
@Suite struct WebSocketHandshakeTests {
    static let upgrade = [
        "GET /xmpp-websocket HTTP/1.1", "Host: localhost:5280", "Upgrade: websocket", "Connection: keep-alive, Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: xmpp",
    ]

    /// Sends `lines` as a request to the routes of a server with
    /// `config`; returns the answer's text and the socket.
    private func request(
        _ lines: [String], config: ServerConfig = ServerConfig(), server: TestServer? = nil
    ) throws -> (answer: String, socket: MemoryTransport, server: TestServer) {
        let server = try server ?? TestServer(config: config)
        let routes = HTTPRoutes()
        routes.add(WebSocketEndpoint.path, WebSocketEndpoint(context: server.context) { transport in
            transport.session = ClientSession(server: server.context, transport: transport, id: 9)
        })
        let hostMeta = HostMetaResponder()
        hostMeta.webSocketURLs = HostMetaResponder.webSocketURLs(domain: "localhost", secure: [5281], plain: [5280, 5280])
        routes.add(HostMetaResponder.xmlPath, hostMeta)
        routes.add(HostMetaResponder.jsonPath, hostMeta)
        let socket = MemoryTransport()
        let http = HTTPConnection(
            transport: socket, peer: SocketAddress(ip: "127.0.0.1", port: 40000)!, loop: server.loop, responder: routes,
            tls: nil, timeout: .seconds(10), log: server.context.log)
        socket.delegate = http
        Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8).withUnsafeBytes { http.receive($0) }
        server.loop.run()
        return (String(decoding: socket.takeOutput(), as: UTF8.self), socket, server)
    }

    @Test func theRFCsKeyGetsTheRFCsAccept() {
        #expect(WebSocketEndpoint.acceptValue(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func anUpgradeSwitchesToAnXMPPStream() throws {
        let (answer, socket, server) = try request(Self.upgrade)
        #expect(answer.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(answer.contains("\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(answer.contains("\r\nSec-WebSocket-Protocol: xmpp\r\n"))
        #expect(answer.contains("\r\nConnection: Upgrade\r\n") && !answer.contains("Connection: close"))
        #expect(!answer.contains("Content-Length"))
        #expect(!socket.isReadingPaused)
        WebSocketFrameTests.text("<open xmlns='urn:ietf:params:xml:ns:xmpp-framing' to='localhost' version='1.0'/>")
            .withUnsafeBytes { socket.delegate?.didRead(bytes: $0) }
        server.loop.run()
        let reply = String(decoding: socket.takeOutput(), as: UTF8.self)
        #expect(reply.contains("<open xmlns='urn:ietf:params:xml:ns:xmpp-framing'"))
        #expect(reply.contains("<features xmlns='http://etherx.jabber.org/streams'>"))
    }

    @Test func refusalsNameWhatIsWrong() throws {
        func answer(replacing field: String, with line: String?) throws -> String {
            let lines = Self.upgrade.filter { !$0.hasPrefix(field) } + (line.map { [$0] } ?? [])
            return try request(lines).answer
        }
        #expect(try answer(replacing: "Sec-WebSocket-Version", with: "Sec-WebSocket-Version: 8").hasPrefix("HTTP/1.1 426"))
        #expect(try answer(replacing: "Sec-WebSocket-Version", with: "Sec-WebSocket-Version: 8").contains("Sec-WebSocket-Version: 13"))
        #expect(try answer(replacing: "Sec-WebSocket-Protocol", with: nil).hasPrefix("HTTP/1.1 400"))
        #expect(try answer(replacing: "Sec-WebSocket-Protocol", with: "Sec-WebSocket-Protocol: chat").hasPrefix("HTTP/1.1 400"))
        #expect(try answer(replacing: "Sec-WebSocket-Key", with: "Sec-WebSocket-Key: c2hvcnQ=").hasPrefix("HTTP/1.1 400"))
        #expect(try answer(replacing: "Connection", with: nil).hasPrefix("HTTP/1.1 400"))
        #expect(try answer(replacing: "Upgrade", with: nil).hasPrefix("HTTP/1.1 426"))
        #expect(try request(["POST /xmpp-websocket HTTP/1.1", "Host: a", "Content-Length: 0"]).answer.hasPrefix("HTTP/1.1 405"))
        #expect(try request(["GET /nothing HTTP/1.1", "Host: a"]).answer.hasPrefix("HTTP/1.1 404"))
    }

    @Test func originsAreCheckedWhenListed() throws {
        var config = ServerConfig()
        config.http.webSocketOrigins = ["https://chat.example.org"]
        let allowed = try request(Self.upgrade + ["Origin: https://CHAT.example.org"], config: config).answer
        #expect(allowed.hasPrefix("HTTP/1.1 101"))
        let other = try request(Self.upgrade + ["Origin: https://evil.example"], config: config).answer
        #expect(other.hasPrefix("HTTP/1.1 403"))
        #expect(try request(Self.upgrade + ["Origin: https://evil.example"]).answer.hasPrefix("HTTP/1.1 101"), "any origin by default")
    }

    @Test func originsInTheConfigMustBeOrigins() throws {
        #expect(try ServerConfig.checkedOrigin("HTTPS://Chat.Example.org:8443") == "https://chat.example.org:8443")
        #expect(throws: ConfigError.self) { try ServerConfig.checkedOrigin("chat.example.org") }
        #expect(throws: ConfigError.self) { try ServerConfig.checkedOrigin("https://chat.example.org/path") }
    }

    @Test func aWebSocketURLInTheConfigMustBeOne() throws {
        try ServerConfig.checkWebSocketURL("wss://chat.example.org/xmpp-websocket")
        try ServerConfig.checkWebSocketURL("ws://[::1]:5280/xmpp-websocket")
        for bad in ["https://chat.example.org/ws", "wss:///path", "wss://a.example/x'y", "wss://a.example/?q"] {
            #expect(throws: ConfigError.self, "\(bad)") { try ServerConfig.checkWebSocketURL(bad) }
        }
    }

    @Test func hostMetaListsTheEndpoints() throws {
        let xrd = try request(["GET /.well-known/host-meta HTTP/1.1", "Host: a"]).answer
        #expect(xrd.hasPrefix("HTTP/1.1 200"))
        #expect(xrd.contains("Access-Control-Allow-Origin: *"))
        #expect(xrd.contains("<Link rel='urn:xmpp:alt-connections:websocket' href='wss://localhost:5281/xmpp-websocket'/>"))
        #expect(xrd.contains("href='ws://localhost:5280/xmpp-websocket'"))
        let json = try request(["GET /.well-known/host-meta.json HTTP/1.1", "Host: a"]).answer
        #expect(json.contains(#"{"links":[{"rel":"urn:xmpp:alt-connections:websocket","href":"wss://localhost:5281/xmpp-websocket"},{"rel":"urn:xmpp:alt-connections:websocket","href":"ws://localhost:5280/xmpp-websocket"}]}"#))
    }
}
