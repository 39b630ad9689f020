import Foundation
import Glibc
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPClient

/// A server a test plays by hand, exchange by exchange, on loopback TCP:
/// STARTTLS with a certificate of its own (which clients pin), then what
/// the test sends and expects. Each step blocks for at most `patienceSeconds`, so the
/// script runs on a thread of its own (``play(_:)``).
final class ScriptedServer: @unchecked Sendable {
    private let listener: LoopbackListener
    let certificate: SelfSignedCertificate
    private let context: TLSContext

    init() throws {
        listener = try LoopbackListener()
        certificate = try SelfSignedCertificate.generate(domain: "localhost")
        context = try TLSContext(configuration: .server(certificate: certificate.source))
    }

    /// A configuration for `alice@localhost` here with `secret`, which does
    /// one login (no reconnects) and asks for nothing after it but the
    /// roster.
    func configuration(_ secret: ClientSecret) -> ClientConfiguration {
        var configuration = testConfiguration(
            "alice", password: "", resource: nil, host: listener.address.ipString, port: listener.address.port,
            fingerprint: certificate.fingerprint)
        configuration.secret = secret
        configuration.reconnect.isEnabled = false
        configuration.syncsHistory = false
        configuration.joinsBookmarkedRooms = false
        return configuration
    }

    /// Runs `script` on a thread of its own; returns what it returns, or
    /// throws what it throws, when it ends.
    func play<T: Sendable>(_ script: @escaping @Sendable (ScriptedServer) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
            Thread { done.resume(with: Result { try script(self) }) }.start()
        }
    }

    /// How long the script waits for the client's next connection or
    /// bytes. Generous: in a full `swift test` run the client under test
    /// can wait tens of seconds for a thread of the cooperative pool, which
    /// synchronous live tests keep busy.
    static let patienceSeconds = 20

    /// The next client connection, within `patienceSeconds`.
    func accept() throws -> ScriptedStream {
        try ScriptedStream(fd: try acceptWithin(milliseconds: Int32(Self.patienceSeconds * 1000)), context: context)
    }

    /// Whether a client connects within `milliseconds`; closes it if so.
    func connectionArrives(within milliseconds: Int32) throws -> Bool {
        guard let fd = try? acceptWithin(milliseconds: milliseconds) else { return false }
        close(fd)
        return true
    }

    private func acceptWithin(milliseconds: Int32) throws -> Int32 {
        var poll = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&poll, 1, milliseconds) == 1 else { throw TestFailure("no connection") }
        return try listener.accept()
    }
}

/// One scripted connection: blocking reads of XML elements, through TLS
/// once it is on.
final class ScriptedStream {
    private let fd: Int32
    private let context: TLSContext
    private var tls: TLSSession?
    private let parser = XMLStreamParser()
    private var parsed: [XMLStreamEvent] = []
    /// Every element the client sent, in order.
    private(set) var received: [Element] = []

    fileprivate init(fd: Int32, context: TLSContext) throws {
        self.fd = fd
        self.context = context
        var timeout = timeval(tv_sec: ScriptedServer.patienceSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Ends the stream and drops the connection, as a server that allows no
    /// second attempt does.
    func end() throws {
        try send("</stream:stream>")
        shutdown(fd, Int32(SHUT_RDWR))
    }

    // MARK: - Reading and writing

    /// The next event the client sent.
    func next() throws -> XMLStreamEvent {
        while parsed.isEmpty {
            let plaintext = try read()
            parsed = parser.feed(plaintext)
        }
        let event = parsed.removeFirst()
        if case .element(let element) = event { received.append(element) }
        return event
    }

    /// The next element the client sent.
    func receive() throws -> Element {
        let event = try next()
        guard case .element(let element) = event else { throw TestFailure("expected an element, got \(event)") }
        return element
    }

    /// Sends `xml` as it is.
    func send(_ xml: String) throws {
        guard let tls else { return try LoopbackListener.write(Array(xml.utf8), to: fd) }
        try tls.send(plaintext: Array(xml.utf8))
        try LoopbackListener.write(tls.takeOutput(), to: fd)
    }

    /// Plaintext bytes from the client, at least one.
    private func read() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw TestFailure("the client closed the connection or was silent for \(ScriptedServer.patienceSeconds) s") }
            guard let tls else { return Array(buffer[..<count]) }
            let plaintext = try tls.receive(ciphertext: Array(buffer[..<count]))
            let output = tls.takeOutput()
            if !output.isEmpty { try LoopbackListener.write(output, to: fd) }
            if !plaintext.isEmpty { return plaintext }
        }
    }

    /// Whether the client closed the connection (within `patienceSeconds`) without
    /// sending anything more than a closing tag.
    func clientCloses() -> Bool {
        do {
            while true {
                if case .element = try next() { return false }
            }
        } catch {
            return true
        }
    }

    // MARK: - Stream steps

    /// Takes the client's stream header and answers with ours and `features`
    /// (their children, XML). Returns the client's header.
    @discardableResult
    func openStream(features: String) throws -> StreamHeader {
        guard case .streamOpen(let header) = try next() else { throw TestFailure("expected a stream header") }
        try send(
            "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
                + "from='localhost' id='\(UUID().uuidString)' version='1.0'>"
                + "<stream:features>\(features)</stream:features>")
        return header
    }

    /// Forgets the old stream, for the client's new header after an RFC
    /// 6120 SASL success (it sends nothing before that header).
    func restartStream() {
        parser.reset()
        parsed = []
    }

    /// Offers STARTTLS, takes `<starttls/>`, proceeds and completes the
    /// handshake; the next stream starts.
    func startTLS() throws {
        try openStream(features: "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>")
        guard try receive().name == "starttls" else { throw TestFailure("expected <starttls/>") }
        try send("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
        let session = TLSSession(context: context)
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        var early: [UInt8] = []
        while !session.isHandshakeComplete {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw TestFailure("the TLS handshake did not finish") }
            early += try session.receive(ciphertext: Array(buffer[..<count]))
            try LoopbackListener.write(session.takeOutput(), to: fd)
        }
        tls = session
        parser.reset()
        parsed = early.isEmpty ? [] : parser.feed(early)
    }

    /// The channel-binding data of this end of the TLS connection, by type.
    var channelBindings: [ChannelBindingType: [UInt8]] { tls?.channelBindings ?? [:] }

    /// Answers what a client asks after logging in until it closes the
    /// stream, or sends an element `stop` accepts: a bind with `jid`, the
    /// roster empty, anything else with `service-unavailable`. Returns the
    /// elements it sent meanwhile.
    @discardableResult
    func serveSession(
        jid: String = "alice@localhost/swiftlet.1", until stop: (Element) -> Bool = { _ in false }
    ) throws -> [Element] {
        var session: [Element] = []
        while true {
            let event = try next()
            guard case .element(let element) = event else {
                if case .streamClose = event { try send("</stream:stream>") }
                return session
            }
            session.append(element)
            if stop(element) { return session }
            guard element.name == "iq", let id = element[attribute: "id"],
                ["get", "set"].contains(element[attribute: "type"] ?? "")
            else { continue }
            if element.child("bind", namespace: NS.bind) != nil {
                try send(
                    "<iq type='result' id='\(id)'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
                        + "<jid>\(jid)</jid></bind></iq>")
            } else if element.child("query", namespace: NS.roster) != nil {
                try send("<iq type='result' id='\(id)'><query xmlns='jabber:iq:roster'/></iq>")
            } else {
                try send(
                    "<iq type='error' id='\(id)'><error type='cancel'><service-unavailable "
                        + "xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
            }
        }
    }
}
