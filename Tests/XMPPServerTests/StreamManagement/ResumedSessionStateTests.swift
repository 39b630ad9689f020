import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0198 §5: a resumed session is the same session, so everything the
/// client set up on it before its connection dropped still holds on the
/// new connection: what it asked to be pushed, carbons, its client state,
/// the directed presence it sent.
@Suite struct ResumedSessionStateTests {
    /// Romeo's connection drops after `setUp`, and a new connection
    /// resumes the session; returns the new connection, its `<resumed/>`
    /// (and anything resent) read.
    private func dropAndResume(
        _ server: TestServer, _ romeo: TestClient, _ enabled: Element, sendingAfterResume extra: String = ""
    ) throws -> (TestClient, [Element]) {
        let id = try #require(enabled[attribute: "id"])
        romeo.dropConnection()
        let again = server.connect()
        try again.openStream()
        try again.authenticate("romeo", "pw")
        again.send("<resume xmlns='urn:xmpp:sm:3' previd='\(id)' h='0'/>\(extra)")
        let elements = again.receiveElements()
        #expect(elements.first?.name == "resumed")
        return (again, elements)
    }

    @Test func aBlocklistPushReachesTheResumedSession() throws {
        let (server, romeo, _, enabled) = try streamManagementCouple()
        romeo.send("<iq type='get' id='list'><blocklist xmlns='urn:xmpp:blocking'/></iq>")
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "list" })
        let (again, _) = try dropAndResume(server, romeo, enabled)
        again.send("<iq type='set' id='block'><block xmlns='urn:xmpp:blocking'><item jid='nurse@localhost'/></block></iq>")
        let elements = again.receiveElements()
        #expect(elements.contains { $0[attribute: "id"] == "block" && $0[attribute: "type"] == "result" })
        let push = elements.first { $0[attribute: "type"] == "set" && $0.child("block", namespace: NS.blocking) != nil }
        #expect(push?[attribute: "to"] == "romeo@localhost/orchard")
    }

    @Test func aRosterPushReachesTheResumedSession() throws {
        let (server, romeo, _, enabled) = try streamManagementCouple()
        romeo.send("<iq type='get' id='roster'><query xmlns='jabber:iq:roster'/></iq>")
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "roster" })
        let (again, _) = try dropAndResume(server, romeo, enabled)
        again.send("<iq type='set' id='add'><query xmlns='jabber:iq:roster'><item jid='nurse@localhost'/></query></iq>")
        let push = again.receiveElements().first { $0[attribute: "type"] == "set" }
        #expect(push?.child("query", namespace: NS.roster)?.child("item", namespace: NS.roster)?[attribute: "jid"] == "nurse@localhost")
    }

    @Test func carbonsStayOnForTheResumedSession() throws {
        let (server, romeo, _, enabled) = try streamManagementCouple()
        romeo.send("<iq type='set' id='carbons'><enable xmlns='urn:xmpp:carbons:2'/></iq>")
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "carbons" })
        let (again, _) = try dropAndResume(server, romeo, enabled)
        let desk = server.connect()
        try desk.login("romeo", "pw", resource: "desk")
        desk.send("<message type='chat' to='juliet@localhost'><body>hi</body></message>")
        let carbon = again.receiveElements().first { $0.name == "message" }
        #expect(carbon?.child("sent", namespace: NS.carbons) != nil)
    }

    @Test func anInactiveClientStaysInactiveAfterResuming() throws {
        let (server, romeo, juliet, enabled) = try streamManagementCouple()
        romeo.send("<inactive xmlns='urn:xmpp:csi:0'/>")
        let (again, _) = try dropAndResume(server, romeo, enabled)
        juliet.send("<presence to='romeo@localhost/orchard'><show>away</show></presence>")
        #expect(!again.receiveElements().contains { $0.name == "presence" }, "held while inactive")
        again.send("<active xmlns='urn:xmpp:csi:0'/>")
        #expect(again.receiveElements().contains { $0.name == "presence" && $0.childText("show") == "away" })
    }

    @Test func directedPresenceSentBeforeTheDropGetsItsUnavailable() throws {
        let (server, romeo, juliet, enabled) = try streamManagementCouple()
        romeo.send("<presence to='juliet@localhost/balcony'/>")
        #expect(juliet.receiveElements().contains { $0.name == "presence" })
        let (again, _) = try dropAndResume(server, romeo, enabled)
        again.send("<presence type='unavailable'/>")
        let unavailable = juliet.receiveElements().first { $0.name == "presence" }
        #expect(unavailable?[attribute: "type"] == "unavailable")
        #expect(unavailable?[attribute: "from"] == "romeo@localhost/orchard")
    }

    @Test func whatFollowsTheResumeInOnePacketIsTheResumedSessions() throws {
        let (server, romeo, _, enabled) = try streamManagementCouple()
        let (_, elements) = try dropAndResume(
            server, romeo, enabled, sendingAfterResume: "<iq type='get' id='ping'><ping xmlns='urn:xmpp:ping'/></iq>")
        let pong = elements.first { $0[attribute: "id"] == "ping" }
        #expect(pong?[attribute: "type"] == "result")
        #expect(pong?[attribute: "to"] == "romeo@localhost/orchard")
    }

    @Test func resumingASessionWhoseConnectionLooksAliveClosesThatConnection() throws {
        let (server, romeo, juliet, enabled) = try streamManagementCouple()
        let id = try #require(enabled[attribute: "id"])
        let again = server.connect()
        try again.openStream()
        try again.authenticate("romeo", "pw")
        again.send("<resume xmlns='urn:xmpp:sm:3' previd='\(id)' h='1'/>")
        #expect(again.receiveElements().first?.name == "resumed")
        #expect(romeo.isClosed)
        #expect(!juliet.receiveElements().contains { $0[attribute: "type"] == "unavailable" })
        juliet.send("<message type='chat' to='romeo@localhost/orchard'><body>still here?</body></message>")
        #expect(again.receiveElements().contains { $0.childText("body") == "still here?" })
    }
}
