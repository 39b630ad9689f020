import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0313 §5.1.1 and XEP-0359: which messages reach which archive, and
/// the stanza ids on delivered messages.
@Suite struct ArchivingTests {
    @Test func aChatIsArchivedForBothSidesAndTheRecipientGetsItsID() throws {
        let clock = SettableClock()
        let (_, romeo, juliet) = try archiveCouple(clock: clock)
        romeo.send("<message to='juliet@localhost' type='chat' id='m1'><body>Wherefore art thou?</body></message>")
        let delivered = try juliet.receiveOne()
        let stanzaID = try #require(delivered.child("stanza-id", namespace: NS.stanzaID))
        #expect(stanzaID[attribute: "by"] == "juliet@localhost")
        #expect(romeo.receiveElements().isEmpty, "the sender gets no id: it is not addressed to the archive owner")

        let hers = juliet.queryArchive()
        #expect(hers.ids == [stanzaID[attribute: "id"]!])
        let mine = romeo.queryArchive()
        #expect(mine.bodies == ["Wherefore art thou?"])
        #expect(mine.ids != hers.ids, "each archive has its own id")
        let result = mine.results[0]
        #expect(result[attribute: "to"] == "romeo@localhost/orchard")
        #expect(result[attribute: "from"] == "romeo@localhost")
        #expect(result.child("result", namespace: NS.mam)?[attribute: "queryid"] == "Q")
        let forwarded = try #require(mine.forwarded(result))
        #expect(forwarded[attribute: "from"] == "romeo@localhost/orchard")
        #expect(forwarded[attribute: "to"] == "juliet@localhost")
        #expect(forwarded[attribute: "id"] == "m1")
        #expect(forwarded.child("stanza-id", namespace: NS.stanzaID) == nil, "archived as sent")
        let delay = result.child("result", namespace: NS.mam)?.child("forwarded", namespace: NS.forward)?
            .child("delay", namespace: NS.delay)
        #expect(delay?[attribute: "stamp"] == "2024-01-01T00:00:00.000Z")
    }

    @Test func anOfflineMessageIsArchivedAndDeliveredLaterWithItsID() throws {
        let (server, romeo, juliet) = try archiveCouple(julietOnline: false)
        romeo.chat("while you sleep", to: "juliet@localhost")
        #expect(juliet.receiveElements().isEmpty)
        juliet.send("</stream:stream>")
        let later = server.connect()
        try later.login("juliet", "pw", resource: "chamber")
        later.send("<presence/>")
        let delivered = later.receiveElements().first { $0.name == "message" }
        let stanzaID = delivered?.child("stanza-id", namespace: NS.stanzaID)?[attribute: "id"]
        #expect(delivered?.child("delay", namespace: NS.delay) != nil)
        let archived = later.queryArchive()
        #expect(archived.bodies == ["while you sleep"])
        #expect(archived.ids == [stanzaID ?? "none"])
        #expect(romeo.queryArchive().bodies == ["while you sleep"])
    }

    @Test func spoofedStanzaIDsOfThisServerAreStrippedOthersKept() throws {
        let (_, romeo, juliet) = try archiveCouple()
        let spoofs = "<stanza-id xmlns='urn:xmpp:sid:0' by='juliet@localhost' id='fake'/>"
            + "<stanza-id xmlns='urn:xmpp:sid:0' by='localhost' id='fake2'/>"
            + "<stanza-id xmlns='urn:xmpp:sid:0' id='no-by'/>"
            + "<stanza-id xmlns='urn:xmpp:sid:0' by='muc.example.org' id='theirs'/>"
        romeo.chat("hi", to: "juliet@localhost", extra: spoofs)
        let ids = try juliet.receiveOne().elements.filter { $0.name == "stanza-id" && $0.namespace == NS.stanzaID }
        #expect(ids.map { $0[attribute: "by"] } == ["muc.example.org", "juliet@localhost"])
        #expect(ids.last?[attribute: "id"] != "fake")
        // Also on a message that is not archived.
        romeo.send("<message to='juliet@localhost' type='headline'><body>news</body>\(spoofs)</message>")
        let headline = try juliet.receiveOne()
        #expect(headline.elements.filter { $0.name == "stanza-id" }.map { $0[attribute: "by"] } == ["muc.example.org"])
        let archived = juliet.queryArchive()
        #expect(archived.bodies == ["hi"])
        let kept = archived.results.first.flatMap(archived.forwarded)?.elements.filter { $0.name == "stanza-id" }
        #expect(kept?.map { $0[attribute: "by"] } == ["muc.example.org"], "the archived copy has no spoofed id either")
    }

    @Test(arguments: [
        ("<message to='juliet@localhost' type='headline'><body>news</body></message>", "headline"),
        ("<message to='juliet@localhost' type='groupchat'><body>all</body></message>", "groupchat"),
        ("<message to='juliet@localhost' type='error'><body>oops</body></message>", "error"),
        ("<message to='juliet@localhost' type='chat'><active xmlns='http://jabber.org/protocol/chatstates'/></message>", "no body"),
        ("<message to='juliet@localhost' type='normal'/>", "normal without body"),
        ("<message to='juliet@localhost' type='chat'><body>x</body><no-store xmlns='urn:xmpp:hints'/></message>", "no-store"),
        ("<message to='juliet@localhost' type='chat'><body>x</body><no-permanent-store xmlns='urn:xmpp:hints'/></message>", "no-permanent-store"),
        ("<message to='localhost' type='chat'><body>to the server</body></message>", "to the domain"),
    ])
    func whatIsNotArchived(stanza: String, what: String) throws {
        let (_, romeo, juliet) = try archiveCouple()
        romeo.send(stanza)
        _ = juliet.receive()
        #expect(romeo.queryArchive().results.isEmpty, "\(what)")
        #expect(juliet.queryArchive().results.isEmpty, "\(what)")
    }

    /// A message to an account that does not exist bounces, and stays in
    /// the sender's archive as sent (as Prosody and ejabberd keep it).
    @Test func aMessageToNobodyIsKeptOnlyInTheSendersArchive() throws {
        let (_, romeo, juliet) = try archiveCouple()
        romeo.send("<message to='nobody@localhost' type='chat'><body>anyone?</body></message>")
        let error = try romeo.receiveOne()
        #expect(error[attribute: "type"] == "error")
        #expect(error.child("stanza-id", namespace: NS.stanzaID) == nil, "no id of a copy that is not kept")
        #expect(romeo.queryArchive().bodies == ["anyone?"])
        #expect(juliet.queryArchive().results.isEmpty)
    }

    @Test func aNormalMessageWithABodyAndNoTypeIsArchived() throws {
        let (_, romeo, juliet) = try archiveCouple()
        romeo.send("<message to='juliet@localhost/balcony'><body>plain</body></message>")
        #expect(try juliet.receiveOne().child("stanza-id", namespace: NS.stanzaID) != nil)
        #expect(juliet.queryArchive().bodies == ["plain"])
        #expect(romeo.queryArchive([("with", "juliet@localhost/balcony")]).bodies == ["plain"])
    }

    @Test func aMessageToOneselfIsArchivedOnce() throws {
        let (server, romeo, _) = try archiveCouple()
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        phone.send("<presence/>")
        _ = phone.receive()
        romeo.send("<presence/>")
        _ = romeo.receive()
        _ = phone.receive()
        romeo.chat("note to self", to: "romeo@localhost/phone")
        let id = try phone.receiveOne().child("stanza-id", namespace: NS.stanzaID)
        #expect(id?[attribute: "by"] == "romeo@localhost")
        let archived = romeo.queryArchive([("with", "romeo@localhost")])
        #expect(archived.bodies == ["note to self"])
        #expect(archived.ids == [id?[attribute: "id"] ?? "none"])
    }

    @Test func idsAreOpaqueUniqueURLSafeAndMapBack() {
        let codec = ArchiveIDs()
        codec.configure(secret: Array(repeating: 7, count: 32))
        let sequences: [Int64] = Array(1...1000) + [1 << 40, Int64.max]
        let ids = sequences.map(codec.id(for:))
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.count == 13 && $0.allSatisfy { "abcdefghijklmnopqrstuvwxyz234567".contains($0) } })
        #expect(ids.map(codec.sequence(of:)) == sequences)
        #expect(ids[0].commonPrefix(with: ids[1]).count < 6, "neighbours do not look alike")
        for garbage in ["", "abc", "zzzzzzzzzzzzz", "AAAAAAAAAAAAA", "aaaaaaaaaaaa1", ids[0] + "a"] {
            #expect(codec.sequence(of: garbage) == nil, "\(garbage)")
        }
        let other = ArchiveIDs()
        other.configure(secret: Array(repeating: 8, count: 32))
        #expect(other.id(for: 1) != ids[0], "the key is the server's")
    }

    /// The domain too: some clients (profanity) look only there.
    @Test func theArchiveIsAdvertisedOnTheAccountAndTheServer() throws {
        let (_, romeo, _) = try archiveCouple()
        romeo.send("<iq type='get' id='d1'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        let account = try romeo.receiveOne().child("query", namespace: NS.discoInfo)?.elements
            .compactMap { $0[attribute: "var"] } ?? []
        #expect(account.contains(NS.mam) && account.contains(NS.mam + "#extended") && account.contains(NS.stanzaID))
        romeo.send("<iq type='get' id='d2' to='localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        let host = try romeo.receiveOne().child("query", namespace: NS.discoInfo)?.elements
            .compactMap { $0[attribute: "var"] } ?? []
        #expect(host.contains(NS.mam) && host.contains(NS.mam + "#extended") && !host.contains(NS.stanzaID))
    }

    @Test func archiveOffRemovesTheFeature() throws {
        var config = ServerConfig()
        config.archive.enabled = false
        let (_, romeo, juliet) = try archiveCouple(config: config)
        romeo.chat("unrecorded", to: "juliet@localhost")
        #expect(try juliet.receiveOne().child("stanza-id", namespace: NS.stanzaID) == nil)
        #expect(juliet.queryArchive().errorCondition == "service-unavailable")
        romeo.send("<iq type='get' id='d1'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        let features = try romeo.receiveOne().child("query", namespace: NS.discoInfo)?.elements
            .compactMap { $0[attribute: "var"] } ?? []
        #expect(!features.contains(NS.mam))
    }

    @Test func deletingTheAccountDeletesItsArchive() throws {
        let (server, romeo, juliet) = try archiveCouple()
        romeo.chat("remember me", to: "juliet@localhost")
        _ = juliet.receive()
        juliet.send("<iq type='set' id='rm'><query xmlns='jabber:iq:register'><remove/></query></iq>")
        _ = juliet.receive()
        try server.addUser("juliet", password: "new")
        let again = server.connect()
        try again.login("juliet", "new")
        #expect(again.queryArchive().results.isEmpty)
        #expect(romeo.queryArchive().bodies == ["remember me"], "the other side keeps its copy")
    }

    @Test func retentionDeletesOldMessagesEveryHour() throws {
        var config = ServerConfig()
        config.archive.retention = .seconds(86_400)
        config.timeouts.idle = .seconds(4 * 3600)
        let clock = SettableClock()
        let (server, romeo, juliet) = try archiveCouple(config: config, clock: clock)
        romeo.chat("old", to: "juliet@localhost")
        clock.advance(seconds: 86_400 / 2)
        romeo.chat("newer", to: "juliet@localhost")
        _ = juliet.receive()
        clock.advance(seconds: 86_400 / 2 + 60)
        #expect(juliet.queryArchive().bodies == ["old", "newer"], "nothing is deleted between purges")
        server.loop.advance(by: .seconds(3600))
        #expect(juliet.queryArchive().bodies == ["newer"])
        #expect(romeo.queryArchive().bodies == ["newer"])
        #expect(server.logLines.lines.contains { $0.contains("archive retention: deleted 1 message stamped before") })
    }
}
