import XMPPCore
import XMPPServer
import XMPPTestSupport
import Testing

/// Joining a room (XEP-0045 §7.2): creation, the presence and subject a
/// newcomer gets, nickname conflicts, several resources, and the limits.
@Suite struct MUCJoinTests {
    @Test func theFirstJoinCreatesAnInstantRoomOwnedByItsCreator() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let got = romeo.join("garden", as: "romeo")
        #expect(got.count == 2)
        let own = got[0]
        #expect(own.name == "presence" && own[attribute: "from"] == "garden@\(conference)/romeo")
        #expect(own.mucStatuses == ["201", "110"])
        #expect(own.mucItem?[attribute: "affiliation"] == "owner")
        #expect(own.mucItem?[attribute: "role"] == "moderator")
        #expect(own.mucItem?[attribute: "jid"] == "romeo@localhost/orchard")
        // No subject yet: an empty one, from the room.
        #expect(got[1][attribute: "from"] == "garden@\(conference)")
        #expect(got[1][attribute: "type"] == "groupchat")
        #expect(got[1].child("subject")?.text == "")
    }

    @Test func aNewcomerGetsTheOthersFirstAndItselfLast() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        romeo.create("garden", as: "romeo")
        let got = juliet.join("garden", as: "juliet")
        let presence = got.filter { $0.name == "presence" }
        #expect(presence.map { $0[attribute: "from"] } == ["garden@\(conference)/romeo", "garden@\(conference)/juliet"])
        // Semi-anonymous: a participant does not see the owner's JID.
        #expect(presence[0].mucItem?[attribute: "jid"] == nil)
        #expect(presence[0].mucStatuses.isEmpty)
        #expect(presence[1].mucStatuses == ["110"])
        #expect(presence[1].mucItem?[attribute: "role"] == "participant")
        #expect(presence[1].mucItem?[attribute: "affiliation"] == "none")
        #expect(got.last?.child("subject") != nil)
        // The moderator sees the newcomer, with its JID and no 110.
        let told = try romeo.receiveOne()
        #expect(told[attribute: "from"] == "garden@\(conference)/juliet")
        #expect(told.mucItem?[attribute: "jid"] == "juliet@localhost/balcony")
        #expect(told.mucStatuses.isEmpty)
    }

    @Test func aTakenNicknameIsAConflict() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        romeo.create("garden", as: "romeo")
        let got = juliet.join("garden", as: "romeo")
        #expect(got.count == 1)
        #expect(got.first?[attribute: "type"] == "error")
        #expect(got.first?.errorCondition == "conflict")
        #expect(got.first?[attribute: "from"] == "garden@\(conference)/romeo")
        #expect(romeo.receiveElements().isEmpty)
        // The refused join left the room as it was: romeo still in it.
        romeo.say("still here", in: "garden")
        #expect(romeo.receiveElements().map { $0[attribute: "from"] } == ["garden@\(conference)/romeo"])
    }

    @Test func oneUserJoinsOneNicknameFromSeveralResources() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        let got = phone.join("garden", as: "romeo")
        let own = got.first { $0[attribute: "from"] == "garden@\(conference)/romeo" }
        #expect(own?.mucStatuses == ["110"])
        #expect(own?.mucItem?[attribute: "jid"] == "romeo@localhost/phone")
        // The others get its presence again: juliet, who does not see real
        // JIDs, as before; romeo's first resource as its own, with 110.
        let toJuliet = juliet.receiveElements()
        #expect(toJuliet.count == 1)
        #expect(toJuliet.first?.mucItem?[attribute: "jid"] == nil)
        let toRomeo = romeo.receiveElements()
        #expect(toRomeo.first?.mucStatuses == ["110"])
        #expect(toRomeo.first?.mucItem?[attribute: "jid"] == "romeo@localhost/orchard")
        // Both resources get the room's messages.
        juliet.say("hello", in: "garden")
        for client in [romeo, phone] {
            let message = client.receiveElements().first { $0.name == "message" }
            #expect(message?[attribute: "from"] == "garden@\(conference)/juliet")
            #expect(message?.childText("body") == "hello")
        }
    }

    @Test func aJoinWithoutNicknameIsMalformed() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        romeo.send("<presence to='garden@\(conference)'><x xmlns='http://jabber.org/protocol/muc'/></presence>")
        #expect(try romeo.receiveOne().errorCondition == "jid-malformed")
    }

    @Test func aFullRoomIsUnavailable() throws {
        var config = ServerConfig()
        config.muc.maxOccupants = 1
        let (server, romeo, juliet) = try romeoAndJuliet(config: config)
        romeo.create("garden", as: "romeo")
        #expect(juliet.join("garden", as: "juliet").first?.errorCondition == "service-unavailable")
        // Another resource of an occupant takes no place of its own.
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        #expect(phone.join("garden", as: "romeo").first?.mucStatuses == ["110"])
    }

    @Test func aUserCreatesAtMostSoManyRooms() throws {
        var config = ServerConfig()
        config.muc.maxRoomsPerUser = 2
        let (_, romeo, juliet) = try romeoAndJuliet(config: config)
        _ = romeo.join("one", as: "romeo")
        _ = romeo.join("two", as: "romeo")
        #expect(romeo.join("three", as: "romeo").first?.errorCondition == "resource-constraint")
        // Joining someone else's room is not creating one.
        juliet.create("hers", as: "juliet")
        #expect(romeo.join("hers", as: "romeo").first?.errorCondition == nil)
        // A room that vanished counts no more.
        romeo.send("<presence to='one@\(conference)/romeo' type='unavailable'/>")
        _ = romeo.receiveElements()
        #expect(romeo.join("three", as: "romeo").first?.mucStatuses == ["201", "110"])
    }

    @Test func longNamesAndNicknamesAreNotAcceptable() throws {
        var config = ServerConfig()
        config.muc.maxRoomNameLength = 5
        config.muc.maxNickLength = 3
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        #expect(romeo.join("garden", as: "rom").first?.errorCondition == "not-acceptable")
        #expect(romeo.join("yard", as: "romeo").first?.errorCondition == "not-acceptable")
        #expect(romeo.join("yard", as: "rom").first?.mucStatuses == ["201", "110"])
    }

    @Test func withMUCOffTheServiceIsUnavailable() throws {
        var config = ServerConfig()
        config.muc.enabled = false
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        #expect(romeo.join("garden", as: "romeo").isEmpty)
        let reply = romeo.request(
            "<iq type='get' id='i' to='\(conference)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>",
            id: "i")
        #expect(reply?.errorCondition == "service-unavailable")
    }
}
