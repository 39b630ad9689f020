import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0441 preferences: what a user's archive keeps.
@Suite struct ArchivePreferencesTests {
    private func setPreferences(_ client: TestClient, _ prefs: String) throws -> Element {
        client.send("<iq type='set' id='p'>\(prefs)</iq>")
        return try client.receiveOne()
    }

    private func jids(_ prefs: Element?, _ list: String) -> [String] {
        prefs?.child(list, namespace: NS.mam)?.elements.map(\.text) ?? []
    }

    @Test func theDefaultComesFromTheConfigWithEmptyLists() throws {
        var config = ServerConfig()
        config.archive.defaultRule = .roster
        let (_, romeo, _) = try archiveCouple(config: config)
        romeo.send("<iq type='get' id='g'><prefs xmlns='urn:xmpp:mam:2'/></iq>")
        let prefs = try romeo.receiveOne().child("prefs", namespace: NS.mam)
        #expect(prefs?[attribute: "default"] == "roster")
        #expect(prefs?.child("always", namespace: NS.mam) != nil && prefs?.child("never", namespace: NS.mam) != nil)
        #expect(jids(prefs, "always").isEmpty)
    }

    @Test func setPreferencesAreAnsweredNormalizedAndKept() throws {
        let (server, romeo, _) = try archiveCouple()
        let reply = try setPreferences(romeo, """
            <prefs xmlns='urn:xmpp:mam:2' default='never'><always><jid>Juliet@LOCALHOST</jid>\
            <jid>juliet@localhost</jid></always><never><jid>nurse@localhost/kitchen</jid></never></prefs>
            """)
        #expect(reply[attribute: "type"] == "result")
        let prefs = reply.child("prefs", namespace: NS.mam)
        #expect(prefs?[attribute: "default"] == "never")
        #expect(jids(prefs, "always") == ["juliet@localhost"])
        #expect(jids(prefs, "never") == ["nurse@localhost/kitchen"])
        let other = server.connect()
        try other.login("romeo", "pw", resource: "phone")
        other.send("<iq type='get' id='g'><prefs xmlns='urn:xmpp:mam:2'/></iq>")
        #expect(try other.receiveOne().child("prefs", namespace: NS.mam) == prefs)
    }

    @Test func neverKeepsTheOwnersArchiveEmptyButNotThePeers() throws {
        let (_, romeo, juliet) = try archiveCouple()
        _ = try setPreferences(juliet, "<prefs xmlns='urn:xmpp:mam:2' default='never'/>")
        romeo.chat("secret", to: "juliet@localhost")
        #expect(try juliet.receiveOne().child("stanza-id", namespace: NS.stanzaID) == nil)
        #expect(juliet.queryArchive().results.isEmpty)
        #expect(romeo.queryArchive().bodies == ["secret"])
    }

    @Test func listsOverrideTheDefaultAndNeverWins() throws {
        let (server, romeo, juliet) = try archiveCouple()
        _ = try setPreferences(juliet, """
            <prefs xmlns='urn:xmpp:mam:2' default='never'><always><jid>romeo@localhost</jid>\
            <jid>nurse@localhost</jid></always><never><jid>nurse@localhost/kitchen</jid></never></prefs>
            """)
        let nurse = server.connect()
        try nurse.login("nurse", "pw", resource: "kitchen")
        let garden = server.connect()
        try garden.login("nurse", "pw", resource: "garden")
        romeo.chat("from romeo", to: "juliet@localhost")
        nurse.chat("from the kitchen", to: "juliet@localhost")
        garden.chat("from the garden", to: "juliet@localhost")
        let delivered = juliet.receiveElements()
        #expect(delivered.map { $0.child("stanza-id", namespace: NS.stanzaID) != nil } == [true, false, true])
        #expect(juliet.queryArchive().bodies == ["from romeo", "from the garden"])
    }

    @Test func rosterKeepsOnlyMessagesWithRosterContacts() throws {
        let (server, romeo, juliet) = try archiveCouple()
        juliet.send("<iq type='set' id='r'><query xmlns='jabber:iq:roster'><item jid='romeo@localhost'/></query></iq>")
        _ = juliet.receive()
        _ = try setPreferences(juliet, "<prefs xmlns='urn:xmpp:mam:2' default='roster'/>")
        let nurse = server.connect()
        try nurse.login("nurse", "pw")
        romeo.chat("from a contact", to: "juliet@localhost")
        nurse.chat("from a stranger", to: "juliet@localhost")
        _ = juliet.receive()
        #expect(juliet.queryArchive().bodies == ["from a contact"])
        #expect(nurse.queryArchive().bodies == ["from a stranger"], "the sender's own rule applies to its copy")
    }

    @Test(arguments: [
        ("<prefs xmlns='urn:xmpp:mam:2'/>", "bad-request"),
        ("<prefs xmlns='urn:xmpp:mam:2' default='sometimes'/>", "bad-request"),
        ("<prefs xmlns='urn:xmpp:mam:2' default='always'><always><jid>a@@b</jid></always></prefs>", "bad-request"),
    ])
    func badPreferencesAreRefused(prefs: String, condition: String) throws {
        let (_, romeo, _) = try archiveCouple()
        let reply = try setPreferences(romeo, prefs)
        #expect(reply.child("error")?.child(condition, namespace: NS.stanzas) != nil)
        romeo.send("<iq type='get' id='g'><prefs xmlns='urn:xmpp:mam:2'/></iq>")
        #expect(try romeo.receiveOne().child("prefs", namespace: NS.mam)?[attribute: "default"] == "always")
    }

    @Test func anotherUsersPreferencesAreForbidden() throws {
        let (_, romeo, _) = try archiveCouple()
        romeo.send("<iq type='get' id='g' to='juliet@localhost'><prefs xmlns='urn:xmpp:mam:2'/></iq>")
        #expect(try romeo.receiveOne().child("error")?.child("forbidden", namespace: NS.stanzas) != nil)
    }
}
