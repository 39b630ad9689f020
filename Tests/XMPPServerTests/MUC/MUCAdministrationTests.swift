import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// XEP-0045 §8–§10: roles, affiliations, their lists, and who may change
/// them.
@Suite struct MUCAdministrationTests {
    /// A `muc#admin` set with `items` to the garden.
    static func admin(_ items: String) -> String {
        "<iq type='set' id='a' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#admin'>\(items)</query></iq>"
    }

    /// A `muc#admin` get of the list `item` asks for.
    static func list(_ item: String) -> String {
        "<iq type='get' id='l' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#admin'>\(item)</query></iq>"
    }

    @Test func aModeratorKicksAParticipant() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let answer = romeo.request(Self.admin("<item nick='juliet' role='none'><reason>Out</reason></item>"), id: "a")
        #expect(answer?[attribute: "type"] == "result")
        let kicked = try juliet.receiveOne()
        #expect(kicked[attribute: "type"] == "unavailable")
        #expect(kicked.mucStatuses == ["307", "110"])
        #expect(kicked.mucItem?.child("reason", namespace: NS.mucUser)?.text == "Out")
        #expect(kicked.mucItem?.child("actor", namespace: NS.mucUser)?[attribute: "nick"] == "romeo")
        // Juliet is out: what the room says no longer reaches her.
        romeo.say("gone", in: "garden")
        #expect(juliet.receiveElements().isEmpty)
    }

    @Test func aParticipantKicksNoOneAndNoOneKicksTheOwner() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let answer = juliet.request(Self.admin("<item nick='romeo' role='none'/>"), id: "a")
        #expect(answer?.errorCondition == "not-allowed")
        #expect(romeo.receiveElements().isEmpty)
        let unknown = romeo.request(Self.admin("<item nick='tybalt' role='none'/>"), id: "a")
        #expect(unknown?.errorCondition == "item-not-found")
    }

    @Test func aBanRemovesAndKeepsOut() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let answer = romeo.request(
            Self.admin("<item jid='juliet@localhost' affiliation='outcast'><reason>Feud</reason></item>"), id: "a")
        #expect(answer?[attribute: "type"] == "result")
        let banned = try juliet.receiveOne()
        #expect(banned.mucStatuses == ["301", "110"])
        #expect(banned.mucItem?[attribute: "affiliation"] == "outcast")
        #expect(juliet.join("garden", as: "juliet").first?.errorCondition == "forbidden")
        let outcasts = romeo.request(Self.list("<item affiliation='outcast'/>"), id: "l")
        let item = outcasts?.child("query", namespace: NS.mucAdmin)?.child("item", namespace: NS.mucAdmin)
        #expect(item?[attribute: "jid"] == "juliet@localhost")
        #expect(item?.child("reason", namespace: NS.mucAdmin)?.text == "Feud")
        // Lifting the ban lets her in again.
        _ = romeo.request(Self.admin("<item jid='juliet@localhost' affiliation='none'/>"), id: "a")
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["110"] })
    }

    @Test func aDomainBanKeepsOutEveryUserOfIt() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        _ = romeo.request(Self.admin("<item jid='localhost' affiliation='outcast'/>"), id: "a")
        #expect(try juliet.receiveOne().mucStatuses == ["301", "110"])
        #expect(juliet.join("garden", as: "juliet").first?.errorCondition == "forbidden")
    }

    @Test func grantingAdminMakesAModeratorWhoSeesRealJIDs() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        _ = mercutio.join("garden", as: "mercutio")
        _ = juliet.receiveElements()
        _ = romeo.receiveElements()
        _ = romeo.request(Self.admin("<item jid='juliet@localhost' affiliation='admin'/>"), id: "a")
        let got = juliet.receiveElements()
        let own = got.first { $0[attribute: "from"] == "garden@\(conference)/juliet" }
        #expect(own?.mucItem?[attribute: "affiliation"] == "admin")
        #expect(own?.mucItem?[attribute: "role"] == "moderator")
        // Now a moderator in a semi-anonymous room: the others again, with JIDs.
        let others = got.filter { $0[attribute: "from"] == "garden@\(conference)/mercutio" }
        #expect(others.last?.mucItem?[attribute: "jid"] == "mercutio@localhost/street")
        // An admin may not make owners, nor touch the owner.
        let owner = juliet.request(Self.admin("<item jid='mercutio@localhost' affiliation='owner'/>"), id: "a")
        #expect(owner?.errorCondition == "not-allowed")
        let demote = juliet.request(Self.admin("<item jid='romeo@localhost' affiliation='member'/>"), id: "a")
        #expect(demote?.errorCondition == "not-allowed")
        // The admin makes members, but may not reserve the owner's nickname
        // for one (which would kick the owner).
        let member = juliet.request(Self.admin("<item jid='mercutio@localhost' affiliation='member'/>"), id: "a")
        #expect(member?[attribute: "type"] == "result")
        let reserve = juliet.request(Self.admin("<item jid='mercutio@localhost' affiliation='member' nick='romeo'/>"), id: "a")
        #expect(reserve?.errorCondition == "conflict")
    }

    @Test func aBannedCreatorNoLongerReadsTheArchive() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        // Persistent: the room stays when everyone has left.
        _ = romeo.request(MUCConfigurationTests.submit(["muc#roomconfig_persistentroom": "1"]), id: "c")
        _ = romeo.request(Self.admin("<item jid='juliet@localhost' affiliation='owner'/>"), id: "a")
        _ = juliet.request(Self.admin("<item jid='romeo@localhost' affiliation='outcast'/>"), id: "a")
        let query = romeo.request(
            "<iq type='set' id='q' to='garden@\(conference)'><query xmlns='urn:xmpp:mam:2'/></iq>", id: "q")
        #expect(query?.errorCondition == "forbidden")
        // An owner reads it without being in the room.
        juliet.send("<presence to='garden@\(conference)/juliet' type='unavailable'/>")
        _ = juliet.receiveElements()
        let owner = juliet.request(
            "<iq type='set' id='q' to='garden@\(conference)'><query xmlns='urn:xmpp:mam:2'/></iq>", id: "q")
        #expect(owner?[attribute: "type"] == "result")
    }

    @Test func theLastOwnerStays() throws {
        let (_, romeo, _) = try romeoAndJulietInTheGarden()
        let answer = romeo.request(Self.admin("<item jid='romeo@localhost' affiliation='admin'/>"), id: "a")
        #expect(answer?.errorCondition == "conflict")
    }

    @Test func visitorsOfAModeratedRoomMayNotSpeakUntilGivenVoice() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        _ = romeo.request(
            "<iq type='set' id='c' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'><field var='muc#roomconfig_moderatedroom'><value>1</value></field></x></query></iq>",
            id: "c")
        _ = juliet.receiveElements()
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        let joined = mercutio.join("garden", as: "mercutio")
        #expect(joined.first { $0.mucStatuses == ["110"] }?.mucItem?[attribute: "role"] == "visitor")
        mercutio.say("hear me", in: "garden")
        #expect(try mercutio.receiveOne().errorCondition == "forbidden")
        _ = romeo.receiveElements()
        let voice = romeo.request(Self.admin("<item nick='mercutio' role='participant'/>"), id: "a")
        #expect(voice?[attribute: "type"] == "result")
        _ = mercutio.receiveElements()
        mercutio.say("now", in: "garden")
        #expect(try mercutio.receiveOne().childText("body") == "now")
        // Voice lists are for moderators.
        let participants = romeo.request(Self.list("<item role='participant'/>"), id: "l")
        let nicks = participants?.child("query", namespace: NS.mucAdmin)?.elements.compactMap { $0[attribute: "nick"] }
        #expect(nicks == ["juliet", "mercutio"])
        #expect(juliet.request(Self.list("<item role='participant'/>"), id: "l")?.errorCondition == "forbidden")
    }

    @Test func listsAreForAdminsAndOwners() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        _ = romeo.request(Self.admin("<item jid='juliet@localhost' affiliation='member'/>"), id: "a")
        let members = romeo.request(Self.list("<item affiliation='member'/>"), id: "l")
        #expect(
            members?.child("query", namespace: NS.mucAdmin)?.elements.map { $0[attribute: "jid"] } == ["juliet@localhost"])
        #expect(juliet.request(Self.list("<item affiliation='member'/>"), id: "l")?.errorCondition == "forbidden")
        let owners = romeo.request(Self.list("<item affiliation='owner'/>"), id: "l")
        #expect(owners?.child("query", namespace: NS.mucAdmin)?.elements.map { $0[attribute: "jid"] } == ["romeo@localhost"])
    }

    @Test func aRoomKeepsAtMostSoManyAffiliations() throws {
        var config = ServerConfig()
        config.muc.maxAffiliations = 2
        let (_, romeo, _) = try romeoAndJulietInTheGarden(config: config)
        #expect(romeo.request(Self.admin("<item jid='juliet@localhost' affiliation='member'/>"), id: "a")?[attribute: "type"] == "result")
        let third = romeo.request(Self.admin("<item jid='tybalt@localhost' affiliation='outcast'/>"), id: "a")
        #expect(third?.errorCondition == "resource-constraint")
        // A bad item changes nothing, however many good ones come first.
        let mixed = romeo.request(
            Self.admin("<item jid='juliet@localhost' affiliation='none'/><item jid='x@localhost/r' affiliation='member'/>"),
            id: "a")
        #expect(mixed?.errorCondition == "jid-malformed")
        let members = romeo.request(Self.list("<item affiliation='member'/>"), id: "l")
        #expect(members?.child("query", namespace: NS.mucAdmin)?.elements.count == 1)
    }
}
