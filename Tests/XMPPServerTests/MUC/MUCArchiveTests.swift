import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// The room's address.
let garden = "garden@\(conference)"

extension TestClient {
    /// Queries the garden's archive.
    func queryGarden(_ fields: [(String, String)] = [], set: String = "") -> ArchiveAnswer {
        queryArchive(fields, set: set, to: garden)
    }
}

/// Rooms' archives (XEP-0313 §6) and their stanza ids (XEP-0359).
@Suite struct MUCArchiveTests {
    @Test func everyCopyCarriesTheIDTheArchiveKeepsItUnder() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        romeo.say("hello", in: "garden")
        let copies = [try romeo.receiveOne(), try juliet.receiveOne()]
        let stamps = copies.map { $0.child("stanza-id", namespace: NS.stanzaID) }
        #expect(stamps.allSatisfy { $0?[attribute: "by"] == garden })
        let id = try #require(stamps[0]?[attribute: "id"])
        #expect(stamps[1]?[attribute: "id"] == id)
        let answer = juliet.queryGarden()
        #expect(answer.ids == [id] && answer.bodies == ["hello"] && answer.complete)
        let result = try #require(answer.results.first)
        #expect(result[attribute: "from"] == garden)
        #expect(result[attribute: "to"] == "juliet@localhost/balcony")
        let archived = try #require(answer.forwarded(result))
        #expect(archived[attribute: "from"] == "\(garden)/romeo")
        #expect(archived[attribute: "type"] == "groupchat")
        #expect(archived.child("occupant-id", namespace: NS.occupantID) != nil)
        #expect(answer.reply[attribute: "from"] == garden)
        // The history has the same id.
        let phone = server.connect()
        try phone.login("juliet", "pw", resource: "phone")
        let history = phone.join("garden", as: "juliet").filter { $0.childText("body") == "hello" }
        #expect(history.first?.child("stanza-id", namespace: NS.stanzaID)?[attribute: "id"] == id)
    }

    @Test func chatStatesSubjectsAndNoStoreHintsAreNotArchived() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send(
            "<message to='\(garden)' type='groupchat'><composing xmlns='http://jabber.org/protocol/chatstates'/></message>")
        romeo.send("<message to='\(garden)' type='groupchat'><subject>Love</subject></message>")
        juliet.send(
            "<message to='\(garden)' type='groupchat'><body>secret</body><no-store xmlns='urn:xmpp:hints'/></message>")
        juliet.say("kept", in: "garden")
        let got = romeo.receiveElements()
        #expect(got.count == 4)
        #expect(got.filter { $0.child("stanza-id", namespace: NS.stanzaID) != nil }.map { $0.childText("body") } == ["kept"])
        #expect(romeo.queryGarden().bodies == ["kept"])
    }

    @Test func pagesAndTheOccupantFilter() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        for number in 1...5 { (number % 2 == 0 ? juliet : romeo).say("m\(number)", in: "garden") }
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()
        let first = juliet.queryGarden(set: "<max>2</max>")
        #expect(first.bodies == ["m1", "m2"] && first.count == 5 && !first.complete)
        let second = juliet.queryGarden(set: "<max>2</max><after>\(first.last!)</after>")
        #expect(second.bodies == ["m3", "m4"] && !second.complete)
        let last = juliet.queryGarden(set: "<max>2</max><before/>")
        #expect(last.bodies == ["m4", "m5"])
        let third = juliet.queryGarden(set: "<max>2</max><after>\(second.last!)</after>")
        #expect(third.bodies == ["m5"] && third.complete)
        #expect(juliet.queryGarden([("with", "\(garden)/juliet")]).bodies == ["m2", "m4"])
        #expect(juliet.queryGarden([("with", garden)]).count == 5)
        #expect(juliet.queryGarden([("with", "elsewhere@\(conference)")]).bodies.isEmpty)
        // The metadata: the first and the last.
        juliet.send("<iq type='get' to='\(garden)' id='meta'><metadata xmlns='urn:xmpp:mam:2'/></iq>")
        let metadata = try juliet.receiveOne().child("metadata", namespace: NS.mam)
        #expect(metadata?.child("start", namespace: NS.mam)?[attribute: "id"] == first.first)
        #expect(metadata?.child("end", namespace: NS.mam)?[attribute: "id"] == third.last)
        // An id of another archive is unknown here.
        #expect(juliet.queryGarden(set: "<after>aaaaaaaaaaaaa</after>").errorCondition == "item-not-found")
    }

    @Test func onlyThoseInTheRoomMayReadItsArchive() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        romeo.say("hello", in: "garden")
        _ = juliet.receiveElements()
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        let refused = mercutio.queryGarden()
        #expect(refused.errorCondition == "forbidden" && refused.results.isEmpty)
        // Another of juliet's resources, not joined, reads it as her.
        let phone = server.connect()
        try phone.login("juliet", "pw", resource: "phone")
        #expect(phone.queryGarden().bodies == ["hello"])
        // Once out of the room, juliet is a stranger too.
        juliet.send("<presence to='\(garden)/juliet' type='unavailable'/>")
        _ = juliet.receiveElements()
        #expect(phone.queryGarden().errorCondition == "forbidden")
        phone.send("<iq type='get' to='\(garden)' id='meta'><metadata xmlns='urn:xmpp:mam:2'/></iq>")
        #expect(try phone.receiveOne().errorCondition == "forbidden")
        #expect(mercutio.queryArchive(to: "nowhere@\(conference)").errorCondition == "item-not-found")
    }

    @Test func aRoomKeepsItsNewestMessagesUpToItsLimit() throws {
        let config = try ServerConfig.parse("muc_archive_max_messages = 3", fileName: "test")
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden(config: config)
        for number in 1...5 {
            romeo.say("m\(number)", in: "garden")
            // Each message written before the next: the limit holds after every write.
            #expect(juliet.queryGarden().count == min(number, 3))
        }
        #expect(juliet.queryGarden().bodies == ["m3", "m4", "m5"])
    }

    @Test func mamRetentionDeletesOldMessagesEveryHour() throws {
        let clock = SettableClock()
        let config = try ServerConfig.parse("mam_retention = 1d\nidle_timeout = 4h", fileName: "test")
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden(config: config, clock: clock.wallClock)
        for (body, age) in [("old", 86_400), ("newer", 60)] {
            romeo.say(body, in: "garden")
            clock.advance(seconds: age)
        }
        _ = juliet.receiveElements()
        #expect(juliet.queryGarden().count == 2, "nothing is deleted between purges")
        server.loop.advance(by: .seconds(3600))
        #expect(juliet.queryGarden().bodies == ["newer"])
        #expect(server.logLines.lines.contains { $0.contains("room archive retention: deleted 1 message stamped before") })
    }

    @Test func aRoomCreatedAgainStartsWithAnEmptyArchive() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        romeo.say("before", in: "garden")
        #expect(juliet.queryGarden().bodies == ["before"])
        for (client, nick) in [(romeo, "romeo"), (juliet, "juliet")] {
            client.send("<presence to='\(garden)/\(nick)' type='unavailable'/>")
        }
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        #expect(mercutio.join("garden", as: "mercutio").first?.mucStatuses.contains("201") == true)
        #expect(mercutio.queryGarden().results.isEmpty)
        mercutio.say("after", in: "garden")
        _ = mercutio.receiveElements()
        #expect(mercutio.queryGarden().bodies == ["after"])
    }

    @Test func theRoomAdvertisesItsArchiveIDsAndModeration() throws {
        let (_, romeo, _) = try romeoAndJulietInTheGarden()
        romeo.send("<iq type='get' to='\(garden)' id='info'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        let info = try romeo.receiveOne()
        let features = info.child("query", namespace: NS.discoInfo)?.elements.filter { $0.name == "feature" }
            .compactMap { $0[attribute: "var"] } ?? []
        for feature in [NS.mam, "urn:xmpp:mam:2#extended", NS.stanzaID, NS.occupantID, NS.messageModerate, NS.messageRetract, NS.muc] {
            #expect(features.contains(feature), "\(feature) in \(info.xml)")
        }
        romeo.send("<iq type='get' to='\(garden)' id='form'><query xmlns='urn:xmpp:mam:2'/></iq>")
        let form = try romeo.receiveOne()
        #expect(form[attribute: "type"] == "result")
        #expect(form.child("query", namespace: NS.mam)?.child("x", namespace: NS.dataForms) != nil)
    }
}
