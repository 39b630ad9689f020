import XMPPCore
import XMPPServer
import XMPPTestSupport
import Testing

/// Presence changes, nickname changes and leaving (XEP-0045 §7.6, §7.7,
/// §7.14), and what the service does not do yet.
@Suite struct MUCLeaveTests {
    @Test func leavingTellsEveryoneAndTheLastOneTakesTheRoomAway() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send("<presence to='garden@\(conference)/juliet' type='unavailable'><status>bye</status></presence>")
        let own = try juliet.receiveOne()
        #expect(own[attribute: "type"] == "unavailable")
        #expect(own.mucStatuses == ["110"])
        #expect(own.mucItem?[attribute: "role"] == "none")
        #expect(own.childText("status") == "bye")
        let told = try romeo.receiveOne()
        #expect(told[attribute: "type"] == "unavailable")
        #expect(told[attribute: "from"] == "garden@\(conference)/juliet")
        #expect(told.mucStatuses.isEmpty)
        // No longer an occupant.
        juliet.say("still here?", in: "garden")
        #expect(try juliet.receiveOne().errorCondition == "not-acceptable")
        #expect(roomList(romeo) == ["garden@\(conference)"])
        romeo.send("<presence to='garden@\(conference)/romeo' type='unavailable'/>")
        _ = romeo.receiveElements()
        #expect(roomList(romeo).isEmpty)
        // A new garden is a new room, without the old one's history.
        let got = juliet.join("garden", as: "juliet")
        #expect(got.first?.mucStatuses == ["201", "110"])
    }

    @Test func anEndedSessionLeavesItsRooms() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.dropConnection()
        let told = romeo.receiveElements().filter { $0[attribute: "from"] == "garden@\(conference)/juliet" }
        #expect(told.map { $0[attribute: "type"] } == ["unavailable"])
        romeo.dropConnection()
        let other = server.connect()
        try other.login("romeo", "pw", resource: "other")
        #expect(roomList(other).isEmpty)
    }

    @Test func goingUnavailableLeavesTheRooms() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send("<presence type='unavailable'/>")
        let told = romeo.receiveElements().filter { $0[attribute: "from"] == "garden@\(conference)/juliet" }
        #expect(told.map { $0[attribute: "type"] } == ["unavailable"])
        romeo.send("<presence type='unavailable'/>")
        let other = server.connect()
        try other.login("romeo", "pw", resource: "other")
        #expect(roomList(other).isEmpty)
    }

    @Test func oneOfSeveralResourcesLeavesQuietly() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        _ = phone.join("garden", as: "romeo")
        _ = juliet.receiveElements()
        _ = romeo.receiveElements()
        phone.dropConnection()
        // The occupant stays: the others get its presence, still available.
        #expect(juliet.receiveElements().map { $0[attribute: "type"] } == [nil])
        #expect(romeo.receiveElements().map { $0[attribute: "type"] } == [nil])
        juliet.say("there?", in: "garden")
        #expect(romeo.receiveElements().count == 1)
    }

    @Test func aPresenceUpdateReachesEveryone() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send("<presence to='garden@\(conference)/juliet'><show>away</show></presence>")
        let own = try juliet.receiveOne()
        #expect(own.childText("show") == "away")
        #expect(own.mucStatuses == ["110"])
        let told = try romeo.receiveOne()
        #expect(told.childText("show") == "away")
        #expect(told[attribute: "from"] == "garden@\(conference)/juliet")
        // With the avatar hash (XEP-0153), "no photo" for juliet.
        #expect(told.child("x", namespace: NS.vcardUpdate) != nil)
    }

    @Test func aNicknameChangeIsAnUnavailableThenAnAvailablePresence() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send("<presence to='garden@\(conference)/jules'/>")
        let own = juliet.receiveElements()
        #expect(own.count == 2)
        #expect(own.first?[attribute: "type"] == "unavailable")
        #expect(own.first?.mucStatuses == ["303", "110"])
        #expect(own.first?.mucItem?[attribute: "nick"] == "jules")
        #expect(own.last?[attribute: "from"] == "garden@\(conference)/jules")
        #expect(own.last?.mucStatuses == ["110"])
        let told = romeo.receiveElements()
        #expect(told.map { $0[attribute: "from"] } == ["garden@\(conference)/juliet", "garden@\(conference)/jules"])
        #expect(told.first?.mucStatuses == ["303"])
        // Messages come from the new nickname; the old one is free, a
        // taken one is a conflict.
        juliet.say("renamed", in: "garden")
        #expect(try romeo.receiveOne()[attribute: "from"] == "garden@\(conference)/jules")
        _ = juliet.receiveElements()
        juliet.send("<presence to='garden@\(conference)/romeo'/>")
        #expect(try juliet.receiveOne().errorCondition == "conflict")
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        #expect(mercutio.join("garden", as: "juliet").contains { $0.mucStatuses == ["110"] })
    }

    @Test func whatIsNotDoneYetIsSaid() throws {
        let (_, romeo, _) = try romeoAndJulietInTheGarden()
        // Registering a nickname with the whole service, and IQs relayed
        // to occupants (§7.3) other than pings and vCards, are not done.
        let register = romeo.request(
            "<iq type='get' id='r' to='\(conference)'><query xmlns='jabber:iq:register'/></iq>", id: "r")
        #expect(register?.errorCondition == "feature-not-implemented")
        let version = romeo.request(
            "<iq type='get' id='v' to='garden@\(conference)/juliet'><query xmlns='jabber:iq:version'/></iq>", id: "v")
        #expect(version?.errorCondition == "feature-not-implemented")
        let missing = romeo.request(
            "<iq type='get' id='m' to='nowhere@\(conference)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>",
            id: "m")
        #expect(missing?.errorCondition == "item-not-found")
    }

    @Test func discoveryDescribesTheServiceAndItsRooms() throws {
        let (_, romeo, _) = try romeoAndJulietInTheGarden()
        let items = romeo.request(
            "<iq type='get' id='i' to='localhost'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>", id: "i")
        #expect(items?.child("query", namespace: NS.discoItems)?.elements.contains { $0[attribute: "jid"] == conference } == true)
        let service = romeo.request(
            "<iq type='get' id='s' to='\(conference)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>", id: "s")
        let identity = service?.child("query", namespace: NS.discoInfo)?.child("identity")
        #expect(identity?[attribute: "category"] == "conference" && identity?[attribute: "type"] == "text")
        #expect(features(service).contains(NS.muc))
        let room = romeo.request(
            "<iq type='get' id='r' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>",
            id: "r")
        #expect(
            Set(features(room)).isSuperset(of: [
                NS.muc, "muc_temporary", "muc_open", "muc_unmoderated", "muc_semianonymous", "muc_public",
            ]))
        #expect(!features(room).contains("muc_nonanonymous"))
    }

    private func features(_ reply: Element?) -> [String] {
        reply?.child("query", namespace: NS.discoInfo)?.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] } ?? []
    }

    /// The rooms the service lists to `client`.
    private func roomList(_ client: TestClient) -> [String] {
        let reply = client.request(
            "<iq type='get' id='list' to='\(conference)'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>",
            id: "list")
        return reply?.child("query", namespace: NS.discoItems)?.elements.compactMap { $0[attribute: "jid"] } ?? []
    }
}

/// Occupancy that must not outlive its session, and joins that must not
/// bring the server down.
@Suite struct MUCSessionEdgeTests {
    @Test func aSessionThatReplacesAnotherStartsInNoRoom() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        let again = server.connect()
        try again.login("romeo", "pw", resource: "orchard")
        #expect(romeo.isClosed, "the older session got conflict")
        let seen = juliet.receiveElements().filter { $0.name == "presence" }
        #expect(seen.contains { $0[attribute: "from"] == "garden@\(conference)/romeo" && $0[attribute: "type"] == "unavailable" })
        _ = again.receiveElements()
        juliet.say("anyone?", in: "garden")
        #expect(again.receiveElements().isEmpty, "the new session is in no room")
    }

    @Test func aHugeHistoryWindowIsNoLimitAndNoCrash() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        romeo.say("first", in: "garden")
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()
        juliet.send("<presence to='garden@\(conference)/juliet' type='unavailable'/>")
        _ = juliet.receiveElements()
        let got = juliet.join("garden", as: "juliet", "<history seconds='99999999999999999'/>")
        #expect(got.contains { $0.child("body")?.text == "first" })
    }
}

extension MUCSessionEdgeTests {
    /// RFC 6121 §4.6.3: unavailable presence ends directed presence, and a
    /// room join is one, even from a resource that never sent initial
    /// presence.
    @Test func goingUnavailableWithoutInitialPresenceLeavesTheRooms() throws {
        let (server, _, juliet) = try romeoAndJulietInTheGarden()
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        _ = phone.join("garden", as: "montague")
        _ = juliet.receiveElements()
        phone.send("<presence type='unavailable'/>")
        let seen = juliet.receiveElements()
        #expect(seen.contains { $0[attribute: "from"] == "garden@\(conference)/montague" && $0[attribute: "type"] == "unavailable" })
    }
}

extension MUCSessionEdgeTests {
    /// XEP-0410: a ping to one's own occupant address says whether one is
    /// still in the room; strangers may not address occupants (§7.3).
    @Test func selfPingTellsWhetherOneIsStillIn() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        let ping = { (to: String) in "<iq type='get' id='p' to='garden@\(conference)/\(to)'><ping xmlns='urn:xmpp:ping'/></iq>" }
        #expect(romeo.request(ping("romeo"), id: "p")?[attribute: "type"] == "result")
        #expect(romeo.request(ping("nobody"), id: "p")?.errorCondition == "item-not-found")
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        #expect(mercutio.request(ping("juliet"), id: "p")?.errorCondition == "not-acceptable")
        juliet.send("<presence to='garden@\(conference)/juliet' type='unavailable'/>")
        _ = juliet.receiveElements()
        #expect(juliet.request(ping("juliet"), id: "p")?.errorCondition == "not-acceptable")
    }
}
