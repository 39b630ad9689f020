import XMPPCore
import XMPPNet
@testable import XMPPServer
import XMPPTestSupport

/// The component end of one in-memory connection to a `TestServer`'s
/// component listener (XEP-0114): sends XML, reads back what the session
/// wrote, and knows the handshake.
final class TestComponent {
    let server: TestServer
    let transport = MemoryTransport(port: 40_100)
    let session: ComponentSession
    private let parser = XMLStreamParser(limits: .init(maxStanzaSize: 4 << 20, maxTokenSize: 1 << 20))
    /// The stream id of the server's header, once received.
    private(set) var streamID: String?

    init(server: TestServer) {
        self.server = server
        session = ComponentSession(server: server.context, transport: transport, id: 100)
        transport.delegate = session
    }

    /// A test server whose configuration declares `gateway` (secret
    /// `s3cret`) and `other` (secret `0ther`), validated.
    static func server(_ change: (inout ServerConfig) -> Void = { _ in }) throws -> TestServer {
        var config = ServerConfig()
        config.components.services = [
            ServerConfig.Component(domain: "gateway", secret: "s3cret"),
            ServerConfig.Component(domain: "other", secret: "0ther"),
        ]
        change(&config)
        return try TestServer(config: config.validated())
    }

    /// Sends `xml` and lets the server run.
    func send(_ xml: String) {
        Array(xml.utf8).withUnsafeBytes { session.receive($0) }
        server.loop.run()
    }

    /// What the server sent since the last call, parsed.
    func receive() -> [XMLStreamEvent] {
        server.loop.run()
        return parser.feed(transport.takeOutput())
    }

    /// The elements the server sent since the last call.
    func receiveElements() -> [Element] {
        receive().compactMap { if case .element(let element) = $0 { element } else { nil } }
    }

    /// The one element the server sent, or a test failure.
    func receiveOne() throws -> Element {
        let elements = receiveElements()
        guard elements.count == 1 else { throw TestFailure("expected one element, got \(elements)") }
        return elements[0]
    }

    /// The stream error's condition the server sent, if it sent one.
    func streamErrorCondition() -> String? {
        receiveElements().first { $0.name == "error" && $0.namespace == NS.streams }?.elements.first?.name
    }

    /// Opens the stream to `domain`; returns the server's header.
    @discardableResult
    func open(to domain: String = "gateway.localhost") throws -> StreamHeader {
        send(
            "<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' "
                + "to='\(domain)'>")
        for case .streamOpen(let header) in receive() {
            streamID = header[attribute: "id"]
            return header
        }
        throw TestFailure("no stream header")
    }

    /// Sends the handshake for `secret` over the current stream id.
    func handshake(_ secret: String) {
        let proof = Hex.encode(HashFunction.sha1.hash(Array(((streamID ?? "") + secret).utf8)))
        send("<handshake>\(proof)</handshake>")
    }

    /// Opens the stream and completes the handshake, or fails the test.
    func connect(to domain: String = "gateway.localhost", secret: String = "s3cret") throws {
        try open(to: domain)
        handshake(secret)
        let reply = try receiveOne()
        guard reply.name == "handshake", reply.namespace == NS.componentAccept, reply.children.isEmpty else {
            throw TestFailure("expected <handshake/>, got \(reply)")
        }
    }
}
