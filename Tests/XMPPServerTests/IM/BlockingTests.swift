import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0191 Blocking Command: the list, its pushes, and what blocking does
/// to routing.
@Suite struct BlockingTests {
    private static func block(_ jids: String..., id: String = "b") -> String {
        "<iq type='set' id='\(id)'><block xmlns='urn:xmpp:blocking'>"
            + jids.map { "<item jid='\($0)'/>" }.joined() + "</block></iq>"
    }

    private static func unblock(_ jids: String..., id: String = "u") -> String {
        "<iq type='set' id='\(id)'><unblock xmlns='urn:xmpp:blocking'>"
            + jids.map { "<item jid='\($0)'/>" }.joined() + "</unblock></iq>"
    }

    private func blocklist(_ client: TestClient) -> [String] {
        let reply = client.request("<iq type='get' id='bl'><blocklist xmlns='urn:xmpp:blocking'/></iq>", id: "bl")
        return reply?.child("blocklist", namespace: NS.blocking)?.elements.compactMap { $0[attribute: "jid"] } ?? []
    }

    @Test func blockIsPushedToResourcesThatAskedForTheList() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        let hall = server.connect()
        try hall.login("romeo", "pw", resource: "hall")
        let quiet = server.connect()
        try quiet.login("romeo", "pw", resource: "quiet")
        #expect(blocklist(romeo) == [])
        #expect(blocklist(hall) == [])
        romeo.send(Self.block("Tybalt@Localhost", "juliet@localhost"))
        let got = romeo.receiveElements()
        #expect(got.first?[attribute: "id"] == "b" && got.first?[attribute: "type"] == "result", "the result comes first")
        for (client, jid) in [(romeo, "romeo@localhost/orchard"), (hall, "romeo@localhost/hall")] {
            let push = (client === romeo ? got : client.receiveElements()).first { $0[attribute: "type"] == "set" }
            #expect(push?[attribute: "to"] == jid)
            let items = push?.child("block", namespace: NS.blocking)?.elements.compactMap { $0[attribute: "jid"] }
            #expect(items == ["tybalt@localhost", "juliet@localhost"], "prepared JIDs")
        }
        #expect(quiet.receiveElements().isEmpty, "no push for a resource that never asked")
        #expect(blocklist(quiet) == ["juliet@localhost", "tybalt@localhost"])
    }

    @Test(arguments: [
        ("<block xmlns='urn:xmpp:blocking'/>", "bad-request"),
        ("<block xmlns='urn:xmpp:blocking'><item jid='a@@localhost'/></block>", "jid-malformed"),
        ("<block xmlns='urn:xmpp:blocking'><item jid='ok@localhost'/><item/></block>", "jid-malformed"),
        ("<unblock xmlns='urn:xmpp:blocking'><item jid='@localhost'/></unblock>", "jid-malformed"),
    ])
    func badCommandsChangeNothing(_ payload: String, _ condition: String) throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = romeo.request("<iq type='set' id='x'>\(payload)</iq>", id: "x")
        #expect(reply?.errorCondition == condition)
        #expect(blocklist(romeo) == [])
    }

    @Test func theListHasALimit() throws {
        var config = ServerConfig()
        config.limits.blocklistMaxItems = 2
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        #expect(romeo.request(Self.block("a@localhost", "b@localhost"), id: "b")?[attribute: "type"] == "result")
        #expect(romeo.request(Self.block("a@localhost", id: "again"), id: "again")?[attribute: "type"] == "result")
        #expect(romeo.request(Self.block("c@localhost", id: "c"), id: "c")?.errorCondition == "policy-violation")
        #expect(blocklist(romeo) == ["a@localhost", "b@localhost"])
    }

    @Test func blockingCutsEverythingBothWaysAndTellsTheContact() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send(Self.block("juliet@localhost"))
        _ = romeo.receive()
        let goodbye = juliet.receiveElements()
        #expect(goodbye.count == 1)
        #expect(goodbye.first?[attribute: "type"] == "unavailable")
        #expect(goodbye.first?[attribute: "from"] == "romeo@localhost/orchard")

        // Romeo's own stanzas to her are refused.
        let refused = romeo.request("<message to='juliet@localhost' type='chat' id='m1'><body>hello?</body></message>", id: "m1")
        #expect(refused?.errorCondition == "not-acceptable")
        #expect(refused?.child("error")?.child("blocked", namespace: NS.blockingErrors) != nil)
        #expect(refused?.child("error")?[attribute: "type"] == "cancel")
        #expect(refused?[attribute: "from"] == "juliet@localhost")
        let iq = romeo.request("<iq type='get' to='juliet@localhost/balcony' id='i1'><ping xmlns='urn:xmpp:ping'/></iq>", id: "i1")
        #expect(iq?.errorCondition == "not-acceptable")
        romeo.send("<presence to='juliet@localhost'/>")
        #expect(try romeo.receiveOne().errorCondition == "not-acceptable")

        // Hers to him get service-unavailable, or nothing.
        let bounced = juliet.request("<message to='romeo@localhost' type='chat' id='m2'><body>ohai</body></message>", id: "m2")
        #expect(bounced?.errorCondition == "service-unavailable")
        #expect(bounced?.child("error")?.child("blocked", namespace: NS.blockingErrors) == nil)
        #expect(juliet.request("<message to='romeo@localhost/orchard' id='m3'><body>hi</body></message>", id: "m3")?.errorCondition == "service-unavailable")
        #expect(juliet.request("<iq type='get' to='romeo@localhost/orchard' id='i2'><ping xmlns='urn:xmpp:ping'/></iq>", id: "i2")?.errorCondition == "service-unavailable")
        #expect(juliet.request("<iq type='get' to='romeo@localhost' id='v'><vCard xmlns='vcard-temp'/></iq>", id: "v")?.errorCondition == "service-unavailable")
        juliet.send("<message to='romeo@localhost' type='headline'><body>news</body></message>")
        juliet.send("<presence><show>away</show></presence>")
        juliet.send("<presence to='romeo@localhost/orchard'/>")
        #expect(juliet.receiveElements().allSatisfy { $0[attribute: "from"] == "juliet@localhost/balcony" }, "only her own presence")
        #expect(romeo.receiveElements().isEmpty, "romeo hears nothing from her")

        // Romeo's presence no longer reaches her.
        romeo.send("<presence><show>dnd</show></presence>")
        #expect(juliet.receiveElements().isEmpty)
        #expect(romeo.receiveElements().count == 1, "his own presence comes back")
        // Nor does his going away.
        romeo.session.transportClosed()
        #expect(juliet.receiveElements().isEmpty)
    }

    @Test func unblockingRestoresMessagesAndPresence() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        _ = blocklist(romeo)
        romeo.send(Self.block("juliet@localhost"))
        _ = romeo.receive()
        _ = juliet.receive()
        romeo.send(Self.unblock("juliet@localhost"))
        let romeoGot = romeo.receiveElements()
        #expect(romeoGot.contains { $0[attribute: "id"] == "u" && $0[attribute: "type"] == "result" })
        #expect(romeoGot.contains { $0.child("unblock", namespace: NS.blocking) != nil }, "the push")
        #expect(romeoGot.contains { $0.name == "presence" && $0[attribute: "from"] == "juliet@localhost/balcony" }, "her presence again")
        let julietGot = juliet.receiveElements()
        #expect(julietGot.contains { $0.name == "presence" && $0[attribute: "type"] == nil && $0[attribute: "from"] == "romeo@localhost/orchard" })
        romeo.send("<message to='juliet@localhost' type='chat'><body>hello!</body></message>")
        #expect(juliet.receiveElements().first?.childText("body") == "hello!")
        juliet.send("<message to='romeo@localhost' type='chat'><body>hi</body></message>")
        #expect(romeo.receiveElements().first?.childText("body") == "hi")
    }

    @Test func itemlessUnblockEmptiesTheListAndXMPPFrameworksErrorReplyIsIgnored() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        _ = blocklist(romeo)
        romeo.send(Self.block("juliet@localhost", "tybalt@localhost"))
        _ = romeo.receive()
        romeo.send("<iq type='set' id='all'><unblock xmlns='urn:xmpp:blocking'/></iq>")
        let got = romeo.receiveElements()
        let push = try #require(got.first { $0[attribute: "type"] == "set" })
        let unblock = try #require(push.child("unblock", namespace: NS.blocking))
        #expect(unblock.elements.isEmpty)
        #expect(blocklist(romeo) == [])
        // XMPPFramework answers an item-less push with an error.
        romeo.send("<iq type='error' id='\(push[attribute: "id"] ?? "")'><unblock xmlns='urn:xmpp:blocking'/><error type='cancel'><feature-not-implemented xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>")
        #expect(romeo.receiveElements().isEmpty)
        #expect(!romeo.isClosed)
        juliet.send("<presence/>")
        _ = juliet.receive()
        romeo.send("<message to='juliet@localhost' type='chat'><body>free</body></message>")
        #expect(juliet.receiveElements().first?.childText("body") == "free")
    }

    @Test func aBlockOnOneResourceLeavesTheOthers() throws {
        let (server, romeo, juliet) = try romeoAndJuliet()
        let chamber = server.connect()
        try chamber.login("juliet", "pw", resource: "chamber")
        romeo.send("<presence/>")
        romeo.send(Self.block("juliet@localhost/balcony"))
        _ = romeo.receive()
        #expect(juliet.request("<message to='romeo@localhost/orchard' id='a'><body>1</body></message>", id: "a")?.errorCondition == "service-unavailable")
        chamber.send("<message to='romeo@localhost/orchard' id='b'><body>2</body></message>")
        #expect(chamber.receiveElements().isEmpty)
        #expect(romeo.receiveElements().map { $0.childText("body") } == ["2"])
    }

    @Test func theBlockHoldsWhileTheUserIsOfflineAndAcrossLogins() throws {
        let (server, romeo, juliet) = try romeoAndJuliet()
        romeo.send(Self.block("juliet@localhost"))
        romeo.send("</stream:stream>")
        #expect(server.context.blocklists.count == 1, "juliet's session holds hers")
        let refused = juliet.request("<message to='romeo@localhost' type='chat' id='o'><body>while you sleep</body></message>", id: "o")
        #expect(refused?.errorCondition == "service-unavailable", "checked against storage on the way to offline storage")
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        let again = server.connect()
        try again.login("romeo", "pw")
        again.send("<presence/>")
        let welcome = again.receiveElements()
        #expect(!welcome.contains { $0.name == "message" }, "nothing was stored")
        #expect(!welcome.contains { $0[attribute: "type"] == "subscribe" }, "her request was dropped")
        #expect(blocklist(again) == ["juliet@localhost"])
        #expect(juliet.request("<message to='romeo@localhost' type='chat' id='p'><body>now?</body></message>", id: "p")?.errorCondition == "service-unavailable")
    }

    @Test func aBlockedRequesterSeesItPendingAndARefusedOneIsNotRedelivered() throws {
        let (server, romeo, juliet) = try romeoAndJuliet()
        juliet.send("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>")
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        romeo.send(Self.block("juliet@localhost"))
        _ = romeo.receive()
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        let push = juliet.receiveElements().last { $0.name == "iq" }?.child("query", namespace: NS.roster)?.child("item")
        #expect(push?[attribute: "ask"] == "subscribe")
        romeo.send("<presence/>")
        #expect(!romeo.receiveElements().contains { $0[attribute: "type"] == "subscribe" }, "the pending request from before the block is held back")
        // And romeo cannot answer her while she is blocked.
        romeo.send("<presence type='subscribed' to='juliet@localhost' id='s'/>")
        #expect(try romeo.receiveOne().errorCondition == "not-acceptable")
        _ = server
    }

    @Test func aBlockedContactLoggingInDoesNotSeeTheUser() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send(Self.block("juliet@localhost"))
        _ = romeo.receive()
        juliet.send("</stream:stream>")
        let back = server.connect()
        try back.login("juliet", "pw", resource: "attic")
        back.send("<presence/>")
        let welcome = back.receiveElements()
        #expect(!welcome.contains { ($0[attribute: "from"] ?? "").hasPrefix("romeo@") }, "\(welcome)")
        #expect(romeo.receiveElements().isEmpty, "nor he her")
    }

    @Test func theCacheEntryGoesWithTheLastSession() throws {
        let (server, romeo, juliet) = try romeoAndJuliet()
        let hall = server.connect()
        try hall.login("romeo", "pw", resource: "hall")
        #expect(server.context.blocklists.count == 2)
        romeo.send("</stream:stream>")
        #expect(server.context.blocklists.list(of: "romeo") != nil)
        hall.session.transportClosed()
        juliet.send("</stream:stream>")
        server.loop.run()
        #expect(server.context.blocklists.count == 0)
    }

    @Test func aSessionThatNeverBindsReleasesTheListToo() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.openStream()
        try client.authenticate("romeo", "pw")
        #expect(server.context.blocklists.list(of: "romeo") == Blocklist(), "loaded before binding")
        client.session.transportClosed()
        server.loop.run()
        #expect(server.context.blocklists.count == 0)
    }

    @Test func serverAdvertisesBlocking() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let info = romeo.request("<iq type='get' id='d' to='localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>", id: "d")
        #expect(info?.child("query", namespace: NS.discoInfo)?.elements.contains { $0[attribute: "var"] == NS.blocking } == true)
    }
}

/// XEP-0191 §4: which JIDs an item matches.
@Suite struct BlocklistMatchingTests {
    @Test(arguments: [
        ("juliet@capulet.lit/balcony", ["juliet@capulet.lit/balcony"], true),
        ("juliet@capulet.lit/balcony", ["juliet@capulet.lit"], true),
        ("juliet@capulet.lit/balcony", ["capulet.lit/balcony"], true),
        ("juliet@capulet.lit/balcony", ["capulet.lit"], true),
        ("juliet@capulet.lit/balcony", ["juliet@capulet.lit/chamber", "nurse@capulet.lit", "capulet.lit/chamber"], false),
        ("juliet@capulet.lit", ["juliet@capulet.lit/balcony"], false),
        ("juliet@capulet.lit", ["capulet.lit"], true),
        ("capulet.lit", ["capulet.lit"], true),
        ("capulet.lit/balcony", ["capulet.lit/balcony"], true),
        ("juliet@capulet.lit", [], false),
    ])
    func matching(_ jid: String, _ items: [String], _ blocked: Bool) throws {
        #expect(Blocklist(items).blocks(try JID(jid)) == blocked)
    }
}
