import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// RFC 6120 §4: stream headers, features and stream errors, without sockets.
@Suite struct NegotiationTests {
    @Test func headerAndFeaturesBeforeTLS() throws {
        let server = try TestServer()
        let client = server.connect()
        client.send(TestClient.header())
        let raw = String(decoding: client.transport.output, as: UTF8.self)
        // XMPPFramework matches the literal `stream:` prefix.
        #expect(raw.hasPrefix("<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='localhost' id='"))
        #expect(raw.contains("<stream:features>"))
        let events = client.receive()
        guard case .streamOpen(let header) = events.first, case .element(let features) = events.last else {
            Issue.record("expected header and features, got \(events)")
            return
        }
        #expect(header[attribute: "version"] == "1.0")
        #expect(header[attribute: "from"] == "localhost")
        #expect((header[attribute: "id"] ?? "").count >= 16)
        let starttls = features.child("starttls", namespace: NS.tls)
        #expect(starttls != nil)
        #expect(starttls?.child("required") == nil, "optional on a loopback-only server")
        let mechanisms = features.child("mechanisms", namespace: NS.sasl)?.elements.map(\.text)
        #expect(mechanisms == ["SCRAM-SHA-256", "SCRAM-SHA-1"], "never PLAIN without TLS")
        #expect(features.child("register", namespace: NS.registerFeature) != nil)
    }

    @Test func requiredTLSOffersOnlySTARTTLS() throws {
        let server = try TestServer(tlsRequired: true)
        let client = server.connect()
        let features = try client.openStream()
        #expect(features.elements.map(\.name) == ["starttls"])
        #expect(features.child("starttls", namespace: NS.tls)?.child("required") != nil)
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>biwsbj1hLHI9YQ==</auth>")
        #expect(try client.receiveOne().elements.first?.name == "encryption-required")
        client.send("<iq type='get' id='r'><query xmlns='jabber:iq:register'/></iq>")
        #expect(client.isClosed, "nothing but STARTTLS before TLS when it is required")
    }

    @Test func afterTLSPlainIsOffered() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        let features = try client.startTLS()
        #expect(features.child("starttls", namespace: NS.tls) == nil)
        let mechanisms = features.child("mechanisms", namespace: NS.sasl)?.elements.map(\.text)
        #expect(mechanisms == ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"])
    }

    /// XEP-0368: TLS from the first byte, then a stream that needs no
    /// STARTTLS and offers PLAIN.
    @Test func directTLS() throws {
        let server = try TestServer(tlsRequired: true)
        let client = server.connect(directTLS: true)
        try client.handshake()
        let features = try client.openStream()
        #expect(features.child("starttls", namespace: NS.tls) == nil)
        let mechanisms = features.child("mechanisms", namespace: NS.sasl)?.elements.map(\.text)
        #expect(mechanisms?.contains("PLAIN") == true)
    }

    @Test func tls12OnlyClientConnects() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        try client.startTLS(maximumVersion: .tls1_2)
        try server.addUser("juliet", password: "r0meo")
        try client.authenticate("juliet", "r0meo", mechanism: .plain)
    }

    @Test(arguments: [
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='example.org'>", "host-unknown"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>", "improper-addressing"),
        ("<stream:stream xmlns='jabber:server' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='localhost'>", "invalid-namespace"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='urn:wrong' version='1.0' to='localhost'>", "invalid-namespace"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='localhost'>", "unsupported-version"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='0.9' to='localhost'>", "unsupported-version"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='localhost'><!-- hi -->", "restricted-xml"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='localhost'><a></b>", "not-well-formed"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='localhost'><message><body>hi</body></message>", "not-authorized"),
        ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='localhost'><presence/>", "not-authorized"),
    ])
    func badStreamsGetTheirStreamError(_ input: String, _ condition: String) throws {
        let server = try TestServer()
        let client = server.connect()
        client.send(input)
        let events = client.receive()
        // Our header first (RFC 6120 §4.9.1.3), then the error, then the close.
        guard case .streamOpen = events.first else {
            Issue.record("no header before the error: \(events)")
            return
        }
        let error = events.compactMap { if case .element(let e) = $0, e.name == "error" { e } else { nil } }.first
        #expect(error.flatMap(StreamError.init)?.condition.rawValue == condition)
        #expect(events.last == .streamClose)
        #expect(client.isClosed)
        #expect(server.logLines.lines.contains { $0.contains("stream error \(condition)") })
    }

    @Test func oversizeStanzaBeforeAuthenticationIsPolicyViolation() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send("<iq type='set' id='r'><query xmlns='jabber:iq:register'><username>" + String(repeating: "a", count: 20_000))
        let error = client.receiveElements().first { $0.name == "error" }
        #expect(error.flatMap(StreamError.init)?.condition == .policyViolation)
        #expect(client.isClosed)
    }

    @Test func clientCloseIsAnsweredAndTheConnectionClosed() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        client.send("</stream:stream>")
        #expect(client.receive() == [.streamClose])
        #expect(client.isClosed)
    }

    @Test func handshakeTimeoutIsConnectionTimeout() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        server.loop.advance(by: .seconds(29))
        #expect(!client.isClosed)
        server.loop.advance(by: .seconds(2))
        let error = client.receiveElements().first { $0.name == "error" }
        #expect(error.flatMap(StreamError.init)?.condition == .connectionTimeout)
        #expect(client.isClosed)
    }

    @Test func idleTimeoutCountsWhitespaceAsActivity() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.login("romeo", "pw")
        // XMPPFramework sends a space every ≤ 150 s: that keeps it alive.
        for _ in 0..<6 {
            server.loop.advance(by: .seconds(150))
            client.send(" ")
        }
        #expect(!client.isClosed)
        // Our keepalive spaces were sent meanwhile.
        server.loop.advance(by: .seconds(301))
        #expect(client.isClosed)
    }

    @Test func serverSendsWhitespaceKeepalives() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.login("romeo", "pw")
        _ = client.transport.takeOutput()
        server.loop.advance(by: .seconds(61))
        #expect(client.transport.output == [0x20])
    }
}

/// Security review L1: text a client sent reaches the log with its control
/// characters escaped, so it cannot forge a line.
@Suite struct LogForgingTests {
    @Test func aMechanismNameWithANewlineCannotForgeALogLine() throws {
        let server = try TestServer()
        let client = server.connect()
        try client.openStream()
        let forged = "info c2s#1 10.0.0.1:5555: authenticated as admin@localhost"
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='X&#10;\(forged)'/>")
        _ = client.receiveElements()
        #expect(!server.logLines.lines.contains { $0.contains("\n") || $0.hasPrefix(forged) })
        #expect(server.logLines.lines.contains { $0.contains("X\\u{A}info c2s#1") })
    }

    @Test(arguments: [
        ("plain text", "plain text"),
        ("a\nb\r\tc", "a\\u{A}b\\u{D}\\u{9}c"),
        ("del\u{7F} c1\u{85} ls\u{2028}", "del\\u{7F} c1\\u{85} ls\\u{2028}"),
        ("é ✓ 🌹", "é ✓ 🌹"),
    ])
    func controlCharactersAreEscaped(_ text: String, _ logged: String) {
        #expect(Logger.escapingControls(text) == logged)
    }
}
