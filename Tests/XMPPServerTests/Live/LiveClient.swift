import Foundation
import XMPPCore
import XMPPNet
import XMPPTestSupport

/// A minimal blocking XMPP client over a real socket: stream headers,
/// STARTTLS with a verified certificate, SCRAM and PLAIN, registration,
/// binding and ping, each step waiting at most `timeout` for the server.
///
/// Values put into XML (usernames, passwords, resources) are not escaped:
/// tests use plain ASCII.
final class LiveClient {
    /// The longest any single wait for the server may take.
    static let timeout = Duration.seconds(5)

    let socket: LiveSocket
    let domain: String
    private let parser = XMLStreamParser(limits: .init(maxStanzaSize: 1 << 20))
    private var tls: TLSSession?
    /// Parsed and not yet taken.
    private var events: [XMLStreamEvent] = []
    /// Whether the server closed the connection (we read its end of file).
    private(set) var serverClosed = false
    private var stanzaCount = 0

    /// Connects to `address`; nothing is sent yet.
    init(connectingTo address: SocketAddress, domain: String) throws {
        socket = try LiveSocket(connectingTo: address)
        self.domain = domain
    }

    /// Whether the connection is still usable from our side.
    var isOpen: Bool { !serverClosed && !socket.isClosed }

    // MARK: - Raw exchange

    /// Sends `xml`, through TLS once it is on.
    func send(_ xml: String) throws {
        try send(bytes: Array(xml.utf8))
    }

    /// Sends raw bytes, through TLS once it is on.
    func send(bytes: [UInt8]) throws {
        guard let tls else { return try socket.write(bytes) }
        try tls.send(plaintext: bytes)
        try socket.write(tls.takeOutput())
    }

    /// Sends `xml` one byte at a time, each byte in a write (and a TLS
    /// record) of its own, `pause` apart, as a slow or fragmenting network
    /// delivers it.
    func trickle(_ xml: String, pause: Duration = .milliseconds(1)) throws {
        for byte in xml.utf8 {
            try send(bytes: [byte])
            Thread.sleep(forTimeInterval: Double(pause.components.seconds) + Double(pause.components.attoseconds) / 1e18)
        }
    }

    /// The next parsed event, waiting up to `timeout`.
    /// - Throws: `TestFailure` on timeout or if the server closes first.
    func nextEvent() throws -> XMLStreamEvent {
        let deadline = ContinuousClock.now + Self.timeout
        while events.isEmpty {
            guard let plaintext = try readPlaintext(until: deadline) else {
                throw TestFailure("the server closed the connection")
            }
            events += parser.feed(plaintext)
        }
        return events.removeFirst()
    }

    /// The next event, which must be an element.
    func nextElement() throws -> Element {
        let event = try nextEvent()
        guard case .element(let element) = event else { throw TestFailure("expected an element, got \(event)") }
        return element
    }

    /// Reads until the server closes the connection, waiting up to
    /// `timeout`; returns every event it sent before.
    func readUntilClosed() throws -> [XMLStreamEvent] {
        let deadline = ContinuousClock.now + Self.timeout
        var seen = events
        events = []
        while let plaintext = try readPlaintext(until: deadline) {
            seen += parser.feed(plaintext)
        }
        return seen
    }

    /// Received bytes, decrypted once TLS is on (possibly none, for a
    /// TLS record with no data); `nil` at the server's end of file.
    private func readPlaintext(until deadline: ContinuousClock.Instant) throws -> [UInt8]? {
        guard let bytes = try socket.read(until: deadline) else {
            serverClosed = true
            return nil
        }
        return try tls?.receive(ciphertext: bytes) ?? bytes
    }

    // MARK: - Negotiation (RFC 6120 §4 to §7)

    /// Sends a stream header to `domain` (new parser state, as after
    /// STARTTLS or SASL success) and returns the server's features.
    @discardableResult
    func openStream() throws -> Element {
        parser.reset()
        try send(
            "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
                + "xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='\(domain)'>")
        let header = try nextEvent()
        guard case .streamOpen = header else { throw TestFailure("expected the server's header, got \(header)") }
        let features = try nextElement()
        guard features.name == "features", features.namespace == NS.streams else {
            throw TestFailure("expected features, got \(features.xml)")
        }
        return features
    }

    /// STARTTLS and a real TLS handshake that verifies the server's
    /// certificate chain and name, then a new stream (RFC 6120 §5.4).
    /// - Parameters:
    ///   - certificatePEM: The server's self-signed certificate, trusted as a root.
    ///   - hostname: The name the certificate must be issued for.
    /// - Returns: The features of the new stream.
    /// - Throws: `TLSError` if the certificate is rejected.
    @discardableResult
    func startTLS(trusting certificatePEM: String, hostname: String = "localhost") throws -> Element {
        try send("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
        let proceed = try nextElement()
        guard proceed.name == "proceed", proceed.namespace == NS.tls else {
            throw TestFailure("STARTTLS refused: \(proceed.xml)")
        }
        let verification = TLSVerification.requireValid(hostname: hostname, additionalTrustRootsPEM: [certificatePEM])
        let session = TLSSession(context: try TLSContext(configuration: .client(verification: verification)))
        let deadline = ContinuousClock.now + Self.timeout
        while !session.isHandshakeComplete {
            try socket.write(session.takeOutput())
            guard let bytes = try socket.read(until: deadline) else {
                throw TestFailure("the server closed the connection during the TLS handshake")
            }
            let early = try session.receive(ciphertext: bytes)
            guard early.isEmpty else { throw TestFailure("the server sent data before our stream header") }
        }
        try socket.write(session.takeOutput())
        tls = session
        return try openStream()
    }

    /// Runs one SASL exchange (RFC 6120 §6.4) and returns how it ended:
    /// `<success/>` (with SCRAM's server signature checked) or `<failure/>`.
    /// The stream is not restarted.
    func authenticate(_ username: String, _ password: String, mechanism: SASLMechanism) throws -> Element {
        let auth = "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='\(mechanism.rawValue)'>"
        if mechanism == .plain {
            let message = try SASLPlain.encode(username: username, password: password)
            try send(auth + SASLPayload.encode(message) + "</auth>")
            return try nextElement()
        }
        var scram = try SCRAMClient(mechanism: mechanism, username: username, secret: .password(password))
        try send(auth + SASLPayload.encode(scram.clientFirstMessage) + "</auth>")
        let challenge = try nextElement()
        guard challenge.name == "challenge" else { return challenge }
        let final = try scram.receiveServerFirst(try Base64.decode(challenge.text))
        try send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLPayload.encode(final))</response>")
        let outcome = try nextElement()
        if outcome.name == "success" {
            try scram.receiveServerFinal(try Base64.decode(outcome.text))
        }
        return outcome
    }

    /// Authenticates, opens the new stream and binds `resource` (or one
    /// the server picks); returns the bound full JID.
    @discardableResult
    func login(
        _ username: String, _ password: String, mechanism: SASLMechanism = .scramSHA256, resource: String? = "live"
    ) throws -> String {
        let outcome = try authenticate(username, password, mechanism: mechanism)
        guard outcome.name == "success" else { throw TestFailure("login failed: \(outcome.xml)") }
        let features = try openStream()
        guard features.child("bind", namespace: NS.bind) != nil else {
            throw TestFailure("no bind feature after SASL: \(features.xml)")
        }
        return try bind(resource)
    }

    /// Creates an account with XEP-0077 in-band registration.
    func register(_ username: String, _ password: String) throws {
        let fields = "<username>\(username)</username><password>\(password)</password>"
        let reply = try request("set", "<query xmlns='jabber:iq:register'>\(fields)</query>")
        guard reply[attribute: "type"] == "result" else { throw TestFailure("registration failed: \(reply.xml)") }
    }

    /// Binds `resource` (RFC 6120 §7); returns the full JID.
    func bind(_ resource: String?) throws -> String {
        let requested = resource.map { "<resource>\($0)</resource>" } ?? ""
        let reply = try request("set", "<bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>\(requested)</bind>")
        guard reply[attribute: "type"] == "result", let jid = reply.child("bind", namespace: NS.bind)?.childText("jid")
        else { throw TestFailure("bind failed: \(reply.xml)") }
        return jid
    }

    /// Pings the server (XEP-0199); returns its reply.
    func ping() throws -> Element {
        try request("get", "<ping xmlns='urn:xmpp:ping'/>", to: domain)
    }

    /// Sends an IQ with a fresh id and returns the reply with that id.
    private func request(_ type: String, _ payload: String, to: String? = nil) throws -> Element {
        stanzaCount += 1
        let id = "live\(stanzaCount)"
        try send("<iq type='\(type)' id='\(id)'\(to.map { " to='\($0)'" } ?? "")>\(payload)</iq>")
        let reply = try nextElement()
        guard reply.name == "iq", reply[attribute: "id"] == id else {
            throw TestFailure("expected the reply to \(id), got \(reply.xml)")
        }
        return reply
    }

    // MARK: - Ending

    /// Closes the stream the polite way (RFC 6120 §4.4): sends the closing
    /// tag and waits for the server's, and for the server to close.
    /// - Returns: What the server sent meanwhile.
    @discardableResult
    func close() throws -> [XMLStreamEvent] {
        try send("</stream:stream>")
        let events = try readUntilClosed()
        socket.close()
        return events
    }

    /// Drops the connection with a TCP reset, mid-whatever.
    func reset() {
        socket.reset()
    }
}

extension Element {
    /// The element as XML, for failure messages.
    var xml: String { (try? XMLSerializer.string(self)) ?? "\(self)" }
}

extension [XMLStreamEvent] {
    /// The condition of the stream error among these events
    /// (`system-shutdown`, `conflict`, ...), if there is one.
    var streamErrorCondition: String? {
        for case .element(let element) in self where element.name == "error" && element.namespace == NS.streams {
            return element.elements.first { $0.namespace == NS.streamErrors }?.name
        }
        return nil
    }

    /// Whether the server closed its stream with `</stream:stream>`.
    var endsWithStreamClose: Bool { last == .streamClose }
}
