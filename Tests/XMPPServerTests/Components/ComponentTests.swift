import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0114 external components over in-memory transports: the
/// handshake, routing both ways, and the limits client streams have too.
@Suite struct ComponentTests {
    /// A server with romeo logged in (resource `test`) and `gateway` connected.
    private func connectedWithRomeo() throws -> (TestServer, TestClient, TestComponent) {
        let server = try TestComponent.server()
        try server.addUser("romeo", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        let component = TestComponent(server: server)
        try component.connect()
        return (server, romeo, component)
    }

    // MARK: - Handshake

    @Test func rightHandshakeConnects() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        let header = try component.open()
        #expect(header.defaultNamespace == NS.componentAccept)
        #expect(header[attribute: "from"] == "gateway.localhost")
        #expect((header[attribute: "id"] ?? "").count >= 16)
        component.handshake("s3cret")
        let reply = try component.receiveOne()
        #expect(reply.name == "handshake" && reply.namespace == NS.componentAccept && reply.children.isEmpty)
        #expect(server.context.components.connectedDomains == ["gateway.localhost"])
        #expect(server.logLines.lines.contains { $0.contains("handshake ok: gateway.localhost is connected") })
        #expect(!component.transport.isClosed)
    }

    /// The handshake is case-insensitive hex: some libraries send capitals.
    @Test func uppercaseHandshakeConnects() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.open()
        let proof = Hex.encode(HashFunction.sha1.hash(Array((component.streamID! + "s3cret").utf8)), uppercase: true)
        component.send("<handshake>\(proof)</handshake>")
        #expect(try component.receiveOne().name == "handshake")
    }

    @Test func wrongSecretIsNotAuthorized() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.open()
        component.handshake("0ther")
        #expect(component.streamErrorCondition() == "not-authorized")
        #expect(component.transport.isClosed)
        #expect(server.context.components.connectedDomains.isEmpty)
        #expect(server.logLines.lines.contains { $0.contains("handshake failed for gateway.localhost") })
        #expect(!server.logLines.lines.contains { $0.contains("s3cret") || $0.contains("0ther") })
    }

    @Test func unknownDomainIsHostUnknown() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        component.send(
            "<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' "
                + "to='nobody.localhost'>")
        #expect(component.streamErrorCondition() == "host-unknown")
        #expect(component.transport.isClosed)
    }

    @Test func clientNamespaceIsInvalidNamespace() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        component.send(
            "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
                + "to='gateway.localhost'>")
        #expect(component.streamErrorCondition() == "invalid-namespace")
    }

    @Test func stanzaBeforeHandshakeIsNotAuthorized() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.open()
        component.send("<message from='gateway.localhost' to='romeo@localhost'><body>x</body></message>")
        #expect(component.streamErrorCondition() == "not-authorized")
    }

    /// A second stream for a connected component is refused; the first
    /// keeps working.
    @Test func secondConnectionIsConflict() throws {
        let server = try TestComponent.server()
        let first = TestComponent(server: server)
        try first.connect()
        let second = TestComponent(server: server)
        try second.open()
        second.handshake("s3cret")
        #expect(second.streamErrorCondition() == "conflict")
        #expect(second.transport.isClosed)
        #expect(!first.transport.isClosed)
        #expect(server.context.components.component("gateway.localhost") != nil)
    }

    @Test func handshakeTimesOut() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.open()
        server.loop.advance(by: server.context.config.timeouts.handshake + .seconds(1))
        #expect(component.streamErrorCondition() == "connection-timeout")
    }

    /// After the handshake a component is idle-checked like a client.
    @Test func silentComponentIsClosed() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.connect()
        server.loop.advance(by: server.context.config.timeouts.idle + .seconds(1))
        #expect(component.transport.isClosed)
        #expect(server.context.components.connectedDomains.isEmpty)
    }

    /// A quiet component is pinged; answering keeps it connected past
    /// `idle_timeout`.
    @Test func componentThatAnswersPingsStaysConnected() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.connect()
        let timeouts = server.context.config.timeouts
        var elapsed = Duration.zero
        while elapsed < timeouts.idle * 2 {
            server.loop.advance(by: timeouts.keepaliveInterval)
            elapsed += timeouts.keepaliveInterval
            let ping = try component.receiveOne()
            #expect(ping.name == "iq" && ping[attribute: "type"] == "get")
            #expect(ping[attribute: "from"] == "localhost" && ping.child("ping", namespace: NS.ping) != nil)
            let id = ping[attribute: "id"] ?? ""
            component.send("<iq from='gateway.localhost' to='localhost' id='\(id)' type='result'/>")
            #expect(component.receiveElements().isEmpty)
        }
        #expect(!component.transport.isClosed)
    }

    // MARK: - Limits

    @Test func oversizeStanzaBeforeHandshakeIsPolicyViolation() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.open()
        component.send("<handshake>" + String(repeating: "a", count: 20_000) + "</handshake>")
        #expect(component.streamErrorCondition() == "policy-violation")
    }

    @Test func oversizeStanzaAfterHandshakeIsPolicyViolation() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.connect()
        let body = String(repeating: "a", count: server.context.config.limits.maxStanzaSize)
        component.send("<message from='gateway.localhost' to='romeo@localhost'><body>\(body)</body></message>")
        #expect(component.streamErrorCondition() == "policy-violation")
        #expect(server.context.components.connectedDomains.isEmpty)
    }

    /// Stanzas above the pre-handshake limit pass once connected.
    @Test func largeStanzaAfterHandshakePasses() throws {
        let (_, romeo, component) = try connectedWithRomeo()
        let body = String(repeating: "a", count: 100_000)
        component.send("<message from='gateway.localhost' to='romeo@localhost/test'><body>\(body)</body></message>")
        #expect(try romeo.receiveOne().childText("body") == body)
    }

    // MARK: - From users to the component

    @Test func userStanzasReachTheComponentAsTheyAre() throws {
        let (_, romeo, component) = try connectedWithRomeo()
        romeo.send("<message to='bot@gateway.localhost/x' id='m1' type='chat'><body>hi</body></message>")
        let message = try component.receiveOne()
        #expect(message.name == "message" && message.namespace == NS.componentAccept)
        #expect(message[attribute: "from"] == "romeo@localhost/test")
        #expect(message[attribute: "to"] == "bot@gateway.localhost/x")
        #expect(message.child("body", namespace: NS.componentAccept)?.text == "hi")
        romeo.send("<presence to='gateway.localhost'/>")
        #expect(try component.receiveOne().name == "presence")
    }

    @Test func iqRoundTripFromUser() throws {
        let (_, romeo, component) = try connectedWithRomeo()
        romeo.send("<iq to='gateway.localhost' id='q1' type='get'><query xmlns='jabber:iq:version'/></iq>")
        let request = try component.receiveOne()
        #expect(request[attribute: "from"] == "romeo@localhost/test" && request[attribute: "id"] == "q1")
        component.send(
            "<iq from='gateway.localhost' to='romeo@localhost/test' id='q1' type='result'>"
                + "<query xmlns='jabber:iq:version'><name>gw</name></query></iq>")
        let result = try romeo.receiveOne()
        #expect(result[attribute: "type"] == "result" && result[attribute: "from"] == "gateway.localhost")
        #expect(result.namespace == NS.client)
        #expect(result.child("query", namespace: "jabber:iq:version")?.childText("name") == "gw")
    }

    /// With the component away: an IQ and a chat message get
    /// `service-unavailable`, presence and errors are dropped.
    @Test func disconnectedComponentAnswersServiceUnavailable() throws {
        let (server, romeo, component) = try connectedWithRomeo()
        component.send("</stream:stream>")
        #expect(component.transport.isClosed)
        #expect(server.context.components.connectedDomains.isEmpty)
        romeo.send("<iq to='gateway.localhost' id='q2' type='get'><ping xmlns='urn:xmpp:ping'/></iq>")
        let iqError = try romeo.receiveOne()
        #expect(iqError[attribute: "type"] == "error" && iqError[attribute: "id"] == "q2")
        #expect(iqError.child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
        romeo.send("<message to='bot@gateway.localhost' id='m2'><body>hi</body></message>")
        let messageError = try romeo.receiveOne()
        #expect(messageError[attribute: "type"] == "error" && messageError[attribute: "id"] == "m2")
        #expect(messageError.child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
        romeo.send("<presence to='gateway.localhost'/>")
        romeo.send("<message to='gateway.localhost' type='error' id='m3'/>")
        #expect(romeo.receiveElements().isEmpty)
    }

    @Test func connectedComponentsAreServiceItems() throws {
        let (_, romeo, component) = try connectedWithRomeo()
        romeo.send("<iq to='localhost' id='d1' type='get'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>")
        let items = try romeo.receiveOne().child("query", namespace: NS.discoItems)?.elements.compactMap {
            $0[attribute: "jid"]
        }
        #expect(items?.contains("gateway.localhost") == true)
        #expect(items?.contains("other.localhost") == false)
    }

    // MARK: - From the component

    @Test func componentMessageReachesTheUser() throws {
        let server = try TestComponent.server()
        try server.addUser("romeo", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        romeo.send("<presence/>")
        _ = romeo.receiveElements()
        let component = TestComponent(server: server)
        try component.connect()
        component.send(
            "<message from='bot@gateway.localhost/r' to='romeo@localhost' type='chat' id='c1'><body>hello</body></message>")
        let message = try romeo.receiveOne()
        #expect(message.namespace == NS.client)
        #expect(message[attribute: "from"] == "bot@gateway.localhost/r")
        #expect(message.child("body", namespace: NS.client)?.text == "hello")
    }

    @Test func componentPingToTheServerIsAnswered() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.connect()
        component.send("<iq from='gateway.localhost' to='localhost' id='p1' type='get'><ping xmlns='urn:xmpp:ping'/></iq>")
        let result = try component.receiveOne()
        #expect(result[attribute: "type"] == "result" && result[attribute: "id"] == "p1")
        #expect(result[attribute: "from"] == "localhost" && result[attribute: "to"] == "gateway.localhost")
    }

    @Test func componentToAnotherComponent() throws {
        let server = try TestComponent.server()
        let gateway = TestComponent(server: server)
        try gateway.connect()
        let other = TestComponent(server: server)
        try other.connect(to: "other.localhost", secret: "0ther")
        gateway.send("<message from='a@gateway.localhost' to='b@other.localhost'><body>x</body></message>")
        #expect(try other.receiveOne()[attribute: "from"] == "a@gateway.localhost")
    }

    @Test func fromAnotherDomainIsInvalidFrom() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.connect()
        component.send("<message from='romeo@localhost' to='juliet@localhost'><body>forged</body></message>")
        #expect(component.streamErrorCondition() == "invalid-from")
        #expect(component.transport.isClosed)
        #expect(server.context.components.connectedDomains.isEmpty)
    }

    @Test func componentStanzasWithoutGoodAddressesAreRefused() throws {
        let server = try TestComponent.server()
        let component = TestComponent(server: server)
        try component.connect()
        component.send("<iq id='n1' type='get'><ping xmlns='urn:xmpp:ping'/></iq>")
        let noTo = try component.receiveOne()
        #expect(noTo.child("error")?.child("bad-request", namespace: NS.stanzas) != nil)
        #expect(noTo[attribute: "to"] == "gateway.localhost")
        component.send("<iq to='x@example.org' id='n2' type='get'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(try component.receiveOne().child("error")?.child("remote-server-not-found", namespace: NS.stanzas) != nil)
        component.send("<iq to='nobody@localhost/x' id='n3' type='get'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(try component.receiveOne().child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
        component.send("<iq to='nobody@localhost/x' id='n4' type='result'/>")
        #expect(component.receiveElements().isEmpty)
        #expect(!component.transport.isClosed)
    }

    @Test func componentMessageToAnOfflineUserIsStored() throws {
        let server = try TestComponent.server()
        try server.addUser("romeo", password: "pw")
        let component = TestComponent(server: server)
        try component.connect()
        component.send("<message from='bot@gateway.localhost' to='romeo@localhost' type='chat'><body>later</body></message>")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        romeo.send("<presence/>")
        let bodies = romeo.receiveElements().compactMap { $0.childText("body") }
        #expect(bodies == ["later"])
    }
}
