import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// RFC 6120 §7 binding, the legacy session, and the server basics of §8
/// and §10 for IQs.
@Suite struct BindingAndRoutingTests {
    private func loggedIn(_ resource: String? = "test") throws -> (TestServer, TestClient) {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.login("romeo", "pw", resource: resource)
        return (server, client)
    }

    @Test func serverGeneratesAResourceWhenNoneIsRequested() throws {
        let (_, client) = try loggedIn(nil)
        #expect(client.session.jid?.resourcepart?.hasPrefix("swiftlet-") == true)
    }

    @Test func legacySessionIsAnswered() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='set' id='s1'><session xmlns='urn:ietf:params:xml:ns:xmpp-session'/></iq>")
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "result" && reply[attribute: "id"] == "s1")
    }

    @Test func invalidResourceIsBadRequest() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.openStream()
        try client.authenticate("romeo", "pw")
        client.send("<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>a&#x200B;b</resource></bind></iq>")
        #expect(try client.receiveOne().child("error")?.child("bad-request", namespace: NS.stanzas) != nil)
    }

    @Test func stanzaBeforeBindingIsRefused() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.openStream()
        try client.authenticate("romeo", "pw")
        client.send("<iq type='get' id='p'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(try client.receiveOne().child("error")?.child("not-authorized", namespace: NS.stanzas) != nil)
    }

    /// Two devices with the same full JID: the older one gets exactly the
    /// `conflict` stream error, which stops XMPPFramework's reconnection.
    @Test func sameFullJIDReplacesTheOldSessionWithConflict() throws {
        let (server, first) = try loggedIn("iPhone")
        let second = server.connect()
        try second.login("romeo", "pw", resource: "iPhone")
        let raw = String(decoding: first.transport.output, as: UTF8.self)
        #expect(raw == "<stream:error><conflict xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error></stream:stream>")
        #expect(first.isClosed)
        #expect(!second.isClosed)
        #expect(server.context.sessions.session(try JID("romeo@localhost/iPhone")) != nil)
        #expect(server.context.sessions.count == 1)
    }

    @Test func closingRemovesTheSession() throws {
        let (server, client) = try loggedIn()
        #expect(server.context.sessions.count == 1)
        client.send("</stream:stream>")
        #expect(server.context.sessions.count == 0)
    }

    @Test(arguments: ["", " to='localhost'", " to='romeo@localhost'"])
    func pingIsAnswered(_ to: String) throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='get' id='p1'\(to)><ping xmlns='urn:xmpp:ping'/></iq>")
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "result")
        #expect(reply[attribute: "id"] == "p1")
        #expect(reply[attribute: "to"] == "romeo@localhost/test")
        // RFC 6120 §8.1.2.1: answered on the account's behalf, from its bare JID.
        #expect(reply[attribute: "from"] == (to == " to='localhost'" ? "localhost" : "romeo@localhost"))
    }

    @Test func anErrorToARequestWithoutToComesFromTheAccount() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='get' id='e1'><query xmlns='urn:example:nothing'/></iq>")
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "error")
        #expect(reply[attribute: "from"] == "romeo@localhost")
    }

    @Test func discoInfoListsWhatIsImplemented() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='get' id='d1' to='localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        let query = try client.receiveOne().child("query", namespace: NS.discoInfo)
        #expect(query?.child("identity")?[attribute: "category"] == "server")
        let features = Set(query?.elements.compactMap { $0[attribute: "var"] } ?? [])
        #expect(features.isSuperset(of: [NS.discoInfo, NS.discoItems, NS.ping, NS.register]))
    }

    @Test func unknownIQIsServiceUnavailable() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='get' id='u1' to='localhost'><query xmlns='urn:example:nothing'/></iq>")
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "error")
        #expect(reply.child("error")?[attribute: "type"] == "cancel")
        #expect(reply.child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
        #expect(reply.child("query", namespace: "urn:example:nothing") != nil, "the request is returned")
    }

    @Test(arguments: [
        "<iq type='get'><ping xmlns='urn:xmpp:ping'/></iq>",
        "<iq type='get' id='x'/>",
        "<iq type='get' id='x'><ping xmlns='urn:xmpp:ping'/><ping xmlns='urn:xmpp:ping'/></iq>",
        "<iq type='bogus' id='x'><ping xmlns='urn:xmpp:ping'/></iq>",
    ])
    func malformedIQIsBadRequest(_ iq: String) throws {
        let (_, client) = try loggedIn()
        client.send(iq)
        #expect(try client.receiveOne().child("error")?.child("bad-request", namespace: NS.stanzas) != nil)
    }

    @Test func clientSuppliedFromIsOverwrittenSilently() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='get' id='p' from='192.168.1.5' to='localhost'><ping xmlns='urn:xmpp:ping'/></iq>")
        let reply = try client.receiveOne()
        #expect(reply[attribute: "type"] == "result")
        #expect(reply[attribute: "to"] == "romeo@localhost/test")
    }

    @Test func otherDomainIsRemoteServerNotFound() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='get' id='p' to='example.org'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(try client.receiveOne().child("error")?.child("remote-server-not-found", namespace: NS.stanzas) != nil)
    }

    @Test func malformedToIsJIDMalformed() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='get' id='p' to='a@b@c'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(try client.receiveOne().child("error")?.child("jid-malformed", namespace: NS.stanzas) != nil)
    }

    @Test func errorStanzasAreNeverAnswered() throws {
        let (_, client) = try loggedIn()
        client.send("<iq type='error' id='e' to='localhost'><error type='cancel'><bad-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
        client.send("<message type='error' to='nobody@localhost'/>")
        #expect(client.receiveElements().isEmpty)
    }

    @Test func unknownTopLevelElementIsUnsupportedStanzaType() throws {
        let (_, client) = try loggedIn()
        client.send("<foo xmlns='urn:example:nonza'/>")
        let error = client.receiveElements().first { $0.name == "error" }
        #expect(error.flatMap(StreamError.init)?.condition == .unsupportedStanzaType)
    }

    @Test func largeStanzasAreAcceptedAfterAuthentication() throws {
        let (_, client) = try loggedIn()
        let photo = String(repeating: "QUFB", count: 200_000)
        client.send("<iq type='get' id='big' to='localhost'><ping xmlns='urn:xmpp:ping'>\(photo)</ping></iq>")
        #expect(try client.receiveOne()[attribute: "type"] == "result")
    }
}

@Suite struct SessionLifetimeTests {
    /// A session that ended is freed: nothing (registry, handle, timers,
    /// storage completions) keeps it alive.
    @Test func endedSessionsAreReleased() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        weak var released: ClientSession?
        do {
            let client = server.connect()
            try client.login("romeo", "pw")
            client.send("<presence/>")
            client.send("</stream:stream>")
            released = client.session
        }
        server.loop.advance(by: .seconds(1))
        #expect(released == nil)
        #expect(server.context.sessions.count == 0)
    }
}

/// XEP-0203: a client cannot stamp a delay in the server's name, which
/// receiving clients trust for when a message was sent.
@Suite struct ForgedDelayTests {
    @Test func aDelayClaimingTheServerIsRemovedOthersStay() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send(
            "<message to='juliet@localhost' type='chat'><body>old?</body>"
                + "<delay xmlns='urn:xmpp:delay' from='localhost' stamp='2001-01-01T00:00:00Z'/>"
                + "<delay xmlns='urn:xmpp:delay' from='romeo@localhost/orchard' stamp='2002-02-02T00:00:00Z'/>"
                + "<delay xmlns='urn:xmpp:delay' stamp='2003-03-03T00:00:00Z'/></message>")
        let message = try #require(juliet.receiveElements().first { $0.name == "message" })
        let stamps = message.elements.filter { $0.name == "delay" && $0.namespace == NS.delay }.map { $0[attribute: "stamp"] }
        #expect(stamps == ["2002-02-02T00:00:00Z", "2003-03-03T00:00:00Z"])
    }
}
