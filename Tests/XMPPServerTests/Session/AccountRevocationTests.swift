import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// A deleted account or a changed password leaves nobody with the old
/// access, and a name registered again inherits nothing of the account
/// that had it (XEP-0077 §3.2, §3.3; RFC 6121 §3.2, §3.3).
@Suite struct AccountRevocationTests {
    private static let remove = "<iq type='set' id='rm'><query xmlns='jabber:iq:register'><remove/></query></iq>"

    /// Someone new registers the name romeo in band, logs in and binds.
    private func registerRomeoAgain(on server: TestServer) throws -> TestClient {
        let newcomer = server.connect()
        try newcomer.openStream()
        newcomer.send(
            "<iq type='set' id='reg'><query xmlns='jabber:iq:register'><username>romeo</username>"
                + "<password>new</password></query></iq>")
        #expect(try newcomer.receiveOne()[attribute: "type"] == "result")
        try newcomer.authenticate("romeo", "new")
        try newcomer.bind("fresh")
        return newcomer
    }

    @Test func deletingAnAccountEndsItsOtherSessionsAndTellsItsContacts() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        let second = server.connect()
        try second.login("romeo", "pw", resource: "second")
        second.send("<presence/>")
        _ = second.receiveElements()
        _ = juliet.receiveElements()

        romeo.send(Self.remove)
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "rm" && $0[attribute: "type"] == "result" })
        #expect(romeo.isClosed)
        #expect(second.isClosed)
        #expect(second.receive().streamErrorCondition == "not-authorized")

        let told = juliet.receiveElements()
        let push = told.first { $0.name == "iq" }?.child("query", namespace: NS.roster)?.child("item")
        #expect(push?[attribute: "jid"] == "romeo@localhost" && push?[attribute: "subscription"] == "remove")
        let kinds = Set(told.filter { $0.name == "presence" && $0[attribute: "from"] == "romeo@localhost" }
            .compactMap { $0[attribute: "type"] })
        #expect(kinds == ["unsubscribe", "unsubscribed"])
        juliet.send("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>")
        let roster = juliet.receiveElements().first { $0[attribute: "id"] == "r" }
        #expect(roster?.child("query", namespace: NS.roster)?.elements.isEmpty == true)
    }

    @Test func aNameRegisteredAgainInheritsNoSubscription() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send(Self.remove)
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()

        let newcomer = try registerRomeoAgain(on: server)
        newcomer.send("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>")
        newcomer.send("<presence/>")
        let seen = newcomer.receiveElements()
        #expect(seen.first { $0[attribute: "id"] == "r" }?.child("query", namespace: NS.roster)?.elements.isEmpty == true)
        #expect(!seen.contains { $0.name == "presence" && $0[attribute: "from"]?.hasPrefix("juliet@") == true })
        juliet.send("<presence><status>still here</status></presence>")
        #expect(!newcomer.receiveElements().contains { $0.name == "presence" })
    }

    @Test func aDetachedSessionOfADeletedAccountCannotBeResumed() throws {
        let (server, romeo, _) = try romeoAndJulietAsContacts()
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        phone.send("<enable xmlns='urn:xmpp:sm:3' resume='true'/>")
        let enabled = try phone.receiveOne()
        phone.dropConnection()
        #expect(server.context.sessions.session(try JID("romeo@localhost/phone")) != nil, "detached, not gone")
        romeo.send(Self.remove)
        _ = romeo.receiveElements()
        #expect(server.context.sessions.sessions(of: try JID("romeo@localhost")).isEmpty)
        _ = enabled
    }

    @Test func aSessionAuthenticatedBeforeTheDeletionCannotBind() throws {
        let (server, romeo, _) = try romeoAndJulietAsContacts()
        let late = server.connect()
        try late.openStream()
        try late.authenticate("romeo", "pw")
        romeo.send(Self.remove)
        _ = romeo.receiveElements()
        late.send("<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></iq>")
        #expect(late.receive().streamErrorCondition == "not-authorized")
        #expect(late.isClosed)
    }

    @Test func changingThePasswordEndsTheOtherSessionsOnly() throws {
        let (server, romeo, _) = try romeoAndJulietAsContacts()
        let second = server.connect()
        try second.login("romeo", "pw", resource: "second")
        romeo.send("<iq type='set' id='pw'><query xmlns='jabber:iq:register'><username>romeo</username><password>new</password></query></iq>")
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "pw" && $0[attribute: "type"] == "result" })
        #expect(!romeo.isClosed)
        #expect(second.receive().streamErrorCondition == "not-authorized")
        #expect(second.isClosed)
        romeo.send("<iq type='get' id='p'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "p" })
        try server.connect().login("romeo", "new")
    }

    /// Everything the account kept goes with it: whoever registers the
    /// name next finds no vCard, PEP node, archive, offline message or
    /// blocklist entry.
    @Test func aNameRegisteredAgainFindsNothingOfTheOldAccount() throws {
        let (server, romeo, juliet) = try archiveCouple()
        romeo.send("<iq type='set' id='v'><vCard xmlns='vcard-temp'><FN>Romeo Montague</FN></vCard></iq>")
        romeo.send(
            "<iq type='set' id='p'><pubsub xmlns='http://jabber.org/protocol/pubsub'><publish node='urn:test:n'>"
                + "<item id='i'><x xmlns='urn:test'/></item></publish></pubsub></iq>")
        romeo.send("<iq type='set' id='b'><block xmlns='urn:xmpp:blocking'><item jid='tybalt@localhost'/></block></iq>")
        romeo.send("<message to='juliet@localhost' type='chat'><body>archived</body></message>")
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()
        romeo.session.transportClosed()
        juliet.send("<message to='romeo@localhost' type='chat'><body>kept offline</body></message>")
        let leaving = server.connect()
        try leaving.login("romeo", "pw", resource: "last")
        leaving.send("<iq type='get' id='v'><vCard xmlns='vcard-temp'/></iq>")
        leaving.send("<iq type='get' id='b'><blocklist xmlns='urn:xmpp:blocking'/></iq>")
        let before = leaving.receiveElements()
        #expect(before.first { $0[attribute: "id"] == "v" }?.child("vCard", namespace: NS.vcard)?.childText("FN") == "Romeo Montague")
        #expect(before.first { $0[attribute: "id"] == "b" }?.child("blocklist", namespace: NS.blocking)?.elements.count == 1)
        leaving.send(Self.remove)
        _ = leaving.receiveElements()

        let newcomer = try registerRomeoAgain(on: server)
        newcomer.send("<presence/>")
        newcomer.send("<iq type='get' id='v'><vCard xmlns='vcard-temp'/></iq>")
        newcomer.send("<iq type='get' id='p'><pubsub xmlns='http://jabber.org/protocol/pubsub'><items node='urn:test:n'/></pubsub></iq>")
        newcomer.send("<iq type='get' id='b'><blocklist xmlns='urn:xmpp:blocking'/></iq>")
        newcomer.send("<iq type='set' id='m'><query xmlns='urn:xmpp:mam:2'/></iq>")
        let seen = newcomer.receiveElements()
        func reply(_ id: String) -> Element? { seen.first { $0.name == "iq" && $0[attribute: "id"] == id } }
        #expect(!seen.contains { $0.name == "message" && $0[attribute: "type"] == "chat" }, "no offline message")
        #expect(reply("v")?.child("vCard", namespace: NS.vcard)?.elements.isEmpty == true)
        #expect(reply("p")?[attribute: "type"] == "error")
        #expect(reply("b")?.child("blocklist", namespace: NS.blocking)?.elements.isEmpty == true)
        #expect(reply("m")?[attribute: "type"] == "result")
        #expect(!seen.contains { $0.name == "message" && $0.child("result", namespace: NS.mam) != nil }, "an empty archive")
    }
}
