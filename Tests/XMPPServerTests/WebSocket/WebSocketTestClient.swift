import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// A browser's end of an in-memory XMPP-over-WebSocket connection: it
/// sends masked frames into a `WebSocketTransport` (over a
/// `MemoryTransport` standing for the socket) and decodes the server's
/// frames, each text message parsed as the whole element it must be.
final class WebSocketTestClient {
    /// A frame the server sent.
    struct Frame: Equatable {
        let opcode: UInt8
        let payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
    }

    let server: TestServer
    /// The socket below the WebSocket.
    let socket: MemoryTransport
    let webSocket: WebSocketTransport
    private let opened: ClientSession
    /// The session on the connection: the one opened, or one it resumed.
    var session: ClientSession { webSocket.session ?? opened }

    init(server: TestServer, host: String = "127.0.0.1") {
        self.server = server
        socket = MemoryTransport(host: host)
        webSocket = WebSocketTransport(
            connection: socket, tls: nil, peer: SocketAddress(ip: host, port: 40000)!,
            maxMessageSize: server.context.config.limits.maxStanzaSizeUnauthenticated, log: server.context.log)
        socket.delegate = webSocket
        opened = ClientSession(server: server.context, transport: webSocket, id: 1)
        webSocket.session = opened
    }

    /// Sends raw bytes as they would come off the socket, and lets the server run.
    func send(bytes: [UInt8]) {
        bytes.withUnsafeBytes { webSocket.didRead(bytes: $0) }
        server.loop.run()
    }

    /// Sends `xml` as one masked text message.
    func send(_ xml: String) {
        send(bytes: WebSocketFrameTests.text(xml))
    }

    /// The frames the server sent since the last call.
    func receiveFrames() -> [Frame] {
        server.loop.run()
        var bytes = socket.takeOutput()[...]
        var frames: [Frame] = []
        while bytes.count >= 2 {
            let start = bytes.startIndex
            var length = Int(bytes[start + 1] & 0x7F)
            var header = 2
            if length == 126 {
                length = Int(bytes[start + 2]) << 8 | Int(bytes[start + 3])
                header = 4
            } else if length == 127 {
                length = bytes[(start + 2)..<(start + 10)].reduce(0) { $0 << 8 | Int($1) }
                header = 10
            }
            frames.append(Frame(opcode: bytes[start] & 0x0F, payload: Array(bytes[(start + header)..<(start + header + length)])))
            bytes = bytes[(start + header + length)...]
        }
        return frames
    }

    /// The text messages the server sent since the last call, each parsed
    /// by itself: a message that is not one whole element fails the test.
    func receiveElements() throws -> [Element] {
        try receiveFrames().filter { $0.opcode == 0x1 }.map { frame in
            let parser = XMLStreamParser()
            let events = parser.feed("<wrapper>") + parser.feed(frame.payload)
            guard events.count == 2, case .element(let element) = events[1] else {
                throw TestFailure("not one element: \(frame.text)")
            }
            return element
        }
    }

    func receiveOne() throws -> Element {
        let elements = try receiveElements()
        guard elements.count == 1 else { throw TestFailure("expected one element, got \(elements)") }
        return elements[0]
    }

    /// Sends `<open/>`; returns the server's `<open/>` and features.
    @discardableResult
    func openStream(to domain: String = "localhost") throws -> (open: Element, features: Element) {
        send("<open xmlns='urn:ietf:params:xml:ns:xmpp-framing' to='\(domain)' version='1.0'/>")
        let elements = try receiveElements()
        guard elements.count == 2, elements[0].name == "open", elements[1].name == "features" else {
            throw TestFailure("expected <open/> and features, got \(elements)")
        }
        return (elements[0], elements[1])
    }

    /// SCRAM-SHA-1 (as Strophe.js does it), then a restarted stream.
    func authenticate(_ username: String, _ password: String) throws {
        try TestClient.scram(
            username, password, mechanism: .scramSHA1, send: { self.send($0) }, receiveOne: { try self.receiveOne() })
        try openStream()
    }

    /// Opens, authenticates and binds `resource`; returns the full JID.
    @discardableResult
    func login(_ username: String, _ password: String, resource: String = "web") throws -> JID {
        try openStream()
        try authenticate(username, password)
        send("<iq xmlns='jabber:client' type='set' id='b1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>\(resource)</resource></bind></iq>")
        let reply = try receiveOne()
        guard let jid = reply.child("bind", namespace: NS.bind)?.childText("jid") else {
            throw TestFailure("bind failed: \(reply)")
        }
        return try JID(jid)
    }
}
