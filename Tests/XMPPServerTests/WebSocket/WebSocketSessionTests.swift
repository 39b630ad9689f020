import Testing
import XMPPCore
import XMPPTestSupport

@testable import XMPPServer

/// RFC 7395 client streams, without sockets: `<open/>`/`<close/>`, one
/// element per message, the same negotiation and routing as over TCP.
@Suite struct WebSocketSessionTests {
    @Test func openIsAnsweredWithOpenAndFeatures() throws {
        let server = try TestServer()
        let client = WebSocketTestClient(server: server)
        let (open, features) = try client.openStream()
        #expect(open.namespace == NS.framing)
        #expect(open[attribute: "from"] == "localhost")
        #expect(open[attribute: "version"] == "1.0")
        #expect(open[attribute: "id"]?.isEmpty == false)
        #expect(features.namespace == NS.streams)
        #expect(features.child("starttls", namespace: NS.tls) == nil, "TLS is the WebSocket's business (RFC 7395 §3.7)")
        let mechanisms = features.child("mechanisms", namespace: NS.sasl)?.elements.map(\.text)
        #expect(mechanisms == ["SCRAM-SHA-256", "SCRAM-SHA-1"], "no PLAIN without TLS")
    }

    @Test func aRemotePlainWebSocketMayNotLogInWhenTLSIsRequired() throws {
        let server = try TestServer(tlsRequired: true)
        let remote = WebSocketTestClient(server: server, host: "192.0.2.7")
        #expect(try remote.openStream().features.child("mechanisms", namespace: NS.sasl) == nil)
        let local = WebSocketTestClient(server: server)
        #expect(try local.openStream().features.child("mechanisms", namespace: NS.sasl) != nil, "loopback HTTP")
    }

    @Test func aLoggedInWebSocketChatsWithATCPClient() throws {
        let server = try TestServer()
        try server.addUser("alice", password: "secret")
        try server.addUser("bob", password: "secret")
        let web = WebSocketTestClient(server: server)
        let alice = try web.login("alice", "secret")
        let bob = server.connect()
        let bobJID = try bob.login("bob", "secret")
        web.send("<message xmlns='jabber:client' to='\(bobJID)' type='chat' id='m1'><body>hi from the browser</body></message>")
        let received = try bob.receiveOne()
        #expect(received[attribute: "from"] == alice.description)
        #expect(received.childText("body") == "hi from the browser")
        bob.send("<message to='\(alice)' type='chat' id='m2'><body>hi back</body></message>")
        let reply = try web.receiveOne()
        #expect(reply.name == "message" && reply.namespace == NS.client, "each message declares jabber:client")
        #expect(reply.childText("body", namespace: NS.client) == "hi back")
    }

    @Test func closeIsAnsweredWithCloseAsStropheExpectsIt() throws {
        let server = try TestServer()
        let client = WebSocketTestClient(server: server)
        try client.openStream()
        client.send("<close xmlns='urn:ietf:params:xml:ns:xmpp-framing' see-other-uri='wss://elsewhere.example/'/>")
        let frames = client.receiveFrames()
        #expect(frames.first?.text == #"<close xmlns="urn:ietf:params:xml:ns:xmpp-framing" />"#)
        #expect(frames.last == .init(opcode: 0x8, payload: [0x03, 0xE8]))
        #expect(client.socket.isClosed)
    }

    @Test func whitespaceAndPongsAreKeepalives() throws {
        let server = try TestServer()
        let client = WebSocketTestClient(server: server)
        try client.openStream()
        client.send(" \r\n")
        client.send(bytes: WebSocketFrameTests.frame(0xA, []))
        client.send(bytes: WebSocketFrameTests.frame(0x9, [4, 2]))
        #expect(client.receiveFrames() == [.init(opcode: 0xA, payload: [4, 2])])
        #expect(!client.socket.isClosed)
    }

    @Test func theServersKeepaliveIsAPing() throws {
        let server = try TestServer()
        try server.addUser("alice", password: "secret")
        let client = WebSocketTestClient(server: server)
        try client.login("alice", "secret")
        client.session.sendKeepalive()
        #expect(client.receiveFrames() == [.init(opcode: 0x9, payload: [])])
    }

    @Test func twoElementsInOneMessageEndTheStream() throws {
        let server = try TestServer()
        let client = WebSocketTestClient(server: server)
        try client.openStream()
        client.send("<iq xmlns='jabber:client' type='get' id='1'/><iq xmlns='jabber:client' type='get' id='2'/>")
        let elements = try client.receiveElements()
        #expect(elements.first?.child("bad-format", namespace: NS.streamErrors) != nil)
        #expect(elements.last?.name == "close")
        #expect(client.socket.isClosed)
    }

    @Test func aPartialElementEndsTheStream() throws {
        let server = try TestServer()
        let client = WebSocketTestClient(server: server)
        try client.openStream()
        client.send("<iq xmlns='jabber:client' type='get' id='1'>")
        #expect(try client.receiveElements().first?.child("bad-format", namespace: NS.streamErrors) != nil)
        #expect(client.socket.isClosed)
    }

    @Test func anElementBeforeOpenEndsTheStream() throws {
        let server = try TestServer()
        let client = WebSocketTestClient(server: server)
        client.send("<iq xmlns='jabber:client' type='get' id='1'/>")
        let elements = try client.receiveElements()
        #expect(elements.map(\.name) == ["open", "error", "close"])
        #expect(elements[1].child("not-well-formed", namespace: NS.streamErrors) != nil)
    }

    @Test func aWrongDomainInOpenIsHostUnknown() throws {
        let server = try TestServer()
        let client = WebSocketTestClient(server: server)
        client.send("<open xmlns='urn:ietf:params:xml:ns:xmpp-framing' to='elsewhere.example' version='1.0'/>")
        let elements = try client.receiveElements()
        #expect(elements.map(\.name) == ["open", "error", "close"])
        #expect(elements[1].child("host-unknown", namespace: NS.streamErrors) != nil)
    }

    @Test func brokenFramesCloseWithTheirCode() throws {
        let server = try TestServer()
        for (bytes, code) in [
            (WebSocketFrameTests.frame(0x1, Array("<a/>".utf8), masked: false), WebSocketCloseCode.protocolError),
            (WebSocketFrameTests.frame(0x2, [1]), .unsupportedData),
            ([0x81, 0x80 | 127, 0, 0, 0, 1, 0, 0, 0, 0], .messageTooBig),
        ] {
            let client = WebSocketTestClient(server: server)
            try client.openStream()
            client.send(bytes: bytes)
            #expect(client.receiveFrames() == [.init(opcode: 0x8, payload: [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)])])
            #expect(client.socket.isClosed)
        }
    }

    @Test func messagesAreLimitedAsStanzasAreBeforeAndAfterLogin() throws {
        let server = try TestServer()
        try server.addUser("alice", password: "secret")
        let limits = server.context.config.limits
        let padding = String(repeating: "x", count: limits.maxStanzaSizeUnauthenticated)
        let early = WebSocketTestClient(server: server)
        try early.openStream()
        early.send("<iq xmlns='jabber:client' type='get' id='big'><query xmlns='jabber:iq:version'>\(padding)</query></iq>")
        #expect(early.receiveFrames() == [.init(opcode: 0x8, payload: [0x03, 0xF1])], "refused from the frame header")
        let late = WebSocketTestClient(server: server)
        let alice = try late.login("alice", "secret")
        late.send("<message xmlns='jabber:client' to='\(alice)' id='big'><body>\(padding)</body></message>")
        #expect(try late.receiveOne().childText("body", namespace: NS.client) == padding)
    }

    @Test func whatCameBeforeTheClientsCloseIsHandledFirst() throws {
        let server = try TestServer()
        try server.addUser("alice", password: "secret")
        try server.addUser("bob", password: "secret")
        let bob = server.connect()
        let bobJID = try bob.login("bob", "secret")
        let web = WebSocketTestClient(server: server)
        try web.login("alice", "secret")
        // As Strophe.js disconnects: a last stanza and <close/>, then the
        // socket's close at once; the roster request first makes the
        // session wait for storage with all of it read.
        web.send(
            bytes: WebSocketFrameTests.text("<iq xmlns='jabber:client' type='get' id='r1'><query xmlns='jabber:iq:roster'/></iq>")
                + WebSocketFrameTests.text("<message xmlns='jabber:client' to='\(bobJID)' id='last'><body>bye</body></message>")
                + WebSocketFrameTests.text("<close xmlns='urn:ietf:params:xml:ns:xmpp-framing'/>")
                + WebSocketFrameTests.frame(0x8, [0x03, 0xE8]))
        #expect(try bob.receiveOne().childText("body") == "bye")
        #expect(web.socket.isClosed)
    }

    @Test func noMessageIsHandedOnWhileTheSessionWaits() throws {
        let server = try TestServer()
        try server.addUser("alice", password: "secret")
        let client = WebSocketTestClient(server: server)
        try client.login("alice", "secret")
        // Two requests in one read: the roster needs storage, the ping waits for it.
        client.send(
            bytes: WebSocketFrameTests.text("<iq xmlns='jabber:client' type='get' id='r1'><query xmlns='jabber:iq:roster'/></iq>")
                + WebSocketFrameTests.text("<iq xmlns='jabber:client' type='get' id='p1'><ping xmlns='urn:xmpp:ping'/></iq>"))
        #expect(try client.receiveElements().map { $0[attribute: "id"] } == ["r1", "p1"])
    }

    @Test func streamManagementResumesOverAWebSocketButNotAcrossTransports() throws {
        let server = try TestServer()
        try server.addUser("alice", password: "secret")
        let first = WebSocketTestClient(server: server)
        try first.login("alice", "secret")
        first.send("<enable xmlns='urn:xmpp:sm:3' resume='true'/>")
        let enabled = try first.receiveOne()
        let id = try #require(enabled[attribute: "id"])
        first.webSocket.didClose(error: nil)
        server.loop.run()

        let tcp = server.connect()
        try tcp.openStream()
        try tcp.authenticate("alice", "secret")
        tcp.send("<resume xmlns='urn:xmpp:sm:3' previd='\(id)' h='0'/>")
        #expect(try tcp.receiveOne().name == "failed", "bytes kept for a WebSocket do not suit a TCP stream")

        let second = WebSocketTestClient(server: server)
        try second.openStream()
        try second.authenticate("alice", "secret")
        second.send("<resume xmlns='urn:xmpp:sm:3' previd='\(id)' h='0'/>")
        #expect(try second.receiveOne().name == "resumed")
    }
}
