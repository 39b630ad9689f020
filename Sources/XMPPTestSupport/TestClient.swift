import XMPPCore
import XMPPServer

/// The client end of one in-memory connection to a `TestServer`: it sends
/// XML (through TLS once started), reads back what the session wrote as
/// parsed events, and knows the usual negotiation steps.
public final class TestClient {
    public let server: TestServer
    public let transport: MemoryTransport
    /// The session the connection belongs to: the one it opened, or the
    /// one it resumed (XEP-0198).
    public var session: ClientSession { transport.session ?? opened }
    private let opened: ClientSession
    /// Reads what the server writes, which can exceed the server's own
    /// limits on what it reads: a stamped `from` is one attribute more, and
    /// escaping makes a `'` in an attribute six bytes.
    private let parser = XMLStreamParser(
        limits: .init(maxStanzaSize: 4 << 20, maxAttributes: 128, maxTokenSize: 1 << 20))
    private var tls: TLSSession?
    private var plaintextBacklog: [UInt8] = []

    init(server: TestServer, host: String, id: Int, directTLS: Bool) {
        self.server = server
        transport = MemoryTransport(host: host)
        opened = ClientSession(server: server.context, transport: transport, id: id, directTLS: directTLS)
        transport.session = opened
    }

    // MARK: - Raw exchange

    /// Sends `xml` and lets the server run.
    public func send(_ xml: String) {
        send(bytes: Array(xml.utf8))
    }

    /// Sends raw bytes (through TLS once it is on) and lets the server run.
    public func send(bytes: [UInt8]) {
        deliver(bytes: bytes)
        server.loop.run()
    }

    /// Hands `xml` to the session without letting the server run, so that
    /// input from several clients is all read before any storage result
    /// comes back, as on a busy server.
    public func deliver(_ xml: String) {
        deliver(bytes: Array(xml.utf8))
    }

    private func deliver(bytes: [UInt8]) {
        var wire = bytes
        if let tls {
            try! tls.send(plaintext: bytes)
            wire = tls.takeOutput()
        }
        wire.withUnsafeBytes { session.receive($0) }
    }

    /// What the server sent since the last call, parsed.
    public func receive() -> [XMLStreamEvent] {
        parser.feed(receiveBytes())
    }

    /// What the server sent since the last call, as bytes (decrypted once
    /// TLS is on), for tests that look at the exact text.
    public func receiveBytes() -> [UInt8] {
        server.loop.run()
        let bytes = transport.takeOutput()
        guard let tls else { return bytes }
        return (try? tls.receive(ciphertext: bytes)) ?? []
    }

    /// Drops the connection without closing the stream, as a client does
    /// when its network goes away (or XMPPFramework's `disconnect`).
    public func dropConnection() {
        session.transportClosed()
        server.loop.run()
    }

    /// The elements the server sent since the last call.
    public func receiveElements() -> [Element] {
        receive().compactMap { if case .element(let element) = $0 { element } else { nil } }
    }

    /// The one element the server sent, or a test failure.
    public func receiveOne() throws -> Element {
        let elements = receiveElements()
        guard elements.count == 1 else { throw TestFailure("expected one element, got \(elements)") }
        return elements[0]
    }

    /// Whether the server closed the connection.
    public var isClosed: Bool { transport.isClosed }

    // MARK: - Negotiation steps

    /// The stream header as XMPPFramework writes it, with `xml:lang` when
    /// `language` is given.
    public static func header(to domain: String = "localhost", language: String? = nil) -> String {
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
            + "xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='\(domain)'"
            + (language.map { " xml:lang='\($0)'>" } ?? ">")
    }

    /// The `xml:lang` of every stream header this client sends, if any.
    public var language: String?

    /// Opens (or reopens) the stream; returns the features.
    @discardableResult
    public func openStream(to domain: String = "localhost") throws -> Element {
        parser.reset()
        send(Self.header(to: domain, language: language))
        let events = receive()
        guard events.count == 2, case .streamOpen = events[0], case .element(let features) = events[1],
            features.name == "features", features.namespace == NS.streams
        else { throw TestFailure("expected a header and features, got \(events)") }
        return features
    }

    /// STARTTLS and the TLS handshake, trusting the server's certificate by
    /// fingerprint, then a new stream; returns its features.
    @discardableResult
    public func startTLS(maximumVersion: TLSVersion = .tls1_3) throws -> Element {
        send("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
        let proceed = try receiveOne()
        guard proceed.name == "proceed" else { throw TestFailure("STARTTLS refused: \(proceed)") }
        try handshake(maximumVersion: maximumVersion)
        return try openStream()
    }

    /// The TLS handshake alone, as a direct TLS (XEP-0368) client does it
    /// right after connecting.
    public func handshake(maximumVersion: TLSVersion = .tls1_3) throws {
        var configuration = TLSConfiguration.client(verification: .pinned(server.certificate.fingerprint))
        configuration.maximumVersion = maximumVersion
        let client = TLSSession(context: try TLSContext(configuration: configuration))
        // Drive the handshake, flight by flight, until the client is done.
        _ = try client.receive(ciphertext: [])
        for _ in 0..<10 where !client.isHandshakeComplete {
            client.takeOutput().withUnsafeBytes { session.receive($0) }
            server.loop.run()
            _ = try client.receive(ciphertext: transport.takeOutput())
        }
        let leftover = client.takeOutput()
        if !leftover.isEmpty { leftover.withUnsafeBytes { session.receive($0) } }
        guard client.isHandshakeComplete else { throw TestFailure("TLS handshake did not complete") }
        tls = client
    }

    /// Authenticates with SCRAM (or PLAIN), then opens the new stream;
    /// returns its features.
    @discardableResult
    public func authenticate(
        _ username: String, _ password: String, mechanism: SASLMechanism = .scramSHA256
    ) throws -> Element {
        if mechanism == .plain {
            let message = try SASLPlain.encode(username: username, password: password)
            send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>\(SASLPayload.encode(message))</auth>")
        } else {
            try Self.scram(
                username, password, mechanism: mechanism, send: { self.send($0) }, receiveOne: { try self.receiveOne() })
            return try openStream()
        }
        let success = try receiveOne()
        guard success.name == "success" else { throw TestFailure("expected success, got \(success)") }
        return try openStream()
    }

    /// A SCRAM exchange in RFC 6120 SASL (auth, challenge, response,
    /// success, the server's signature checked) over any transport:
    /// `send` writes XML, `receiveOne` reads the server's next element.
    public static func scram(
        _ username: String, _ password: String, mechanism: SASLMechanism, send: (String) -> Void,
        receiveOne: () throws -> Element
    ) throws {
        var scram = try SCRAMClient(mechanism: mechanism, username: username, secret: .password(password))
        send(
            "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='\(mechanism.rawValue)'>"
                + SASLPayload.encode(scram.clientFirstMessage) + "</auth>")
        let challenge = try receiveOne()
        guard challenge.name == "challenge" else { throw TestFailure("expected a challenge, got \(challenge)") }
        let final = try scram.receiveServerFirst(try Base64.decode(challenge.text))
        send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLPayload.encode(final))</response>")
        let success = try receiveOne()
        guard success.name == "success" else { throw TestFailure("expected success, got \(success)") }
        try scram.receiveServerFinal(try Base64.decode(success.text))
    }

    /// The channel-binding data of this client's TLS connection, by type;
    /// empty before TLS.
    public var channelBindings: [ChannelBindingType: [UInt8]] { tls?.channelBindings ?? [:] }

    /// Binds `resource` (or lets the server choose); returns the full JID.
    @discardableResult
    public func bind(_ resource: String? = nil) throws -> JID {
        let request = resource.map { "<resource>\($0)</resource>" } ?? ""
        send("<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>\(request)</bind></iq>")
        let reply = try receiveOne()
        guard reply[attribute: "type"] == "result", let jid = reply.child("bind", namespace: NS.bind)?.childText("jid")
        else { throw TestFailure("bind failed: \(reply)") }
        return try JID(jid)
    }

    /// Opens a stream, authenticates and binds: a logged-in client.
    @discardableResult
    public func login(_ username: String, _ password: String, resource: String? = "test") throws -> JID {
        try openStream()
        try authenticate(username, password)
        return try bind(resource)
    }
}
