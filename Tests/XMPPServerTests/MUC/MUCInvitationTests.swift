import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// XEP-0045 §7.8 and §7.10: invitations through the room, declines, and
/// registering a nickname with a room.
@Suite struct MUCInvitationTests {
    /// Romeo in the garden, juliet online but not in it, mercutio's
    /// account without a session.
    static func romeoInvites() throws -> (TestServer, TestClient, TestClient) {
        let (server, romeo, juliet) = try romeoAndJuliet()
        try server.addUser("mercutio", password: "pw")
        for client in [romeo, juliet] {
            client.send("<presence/>")
            _ = client.receiveElements()
        }
        romeo.create("garden", as: "romeo")
        _ = romeo.receiveElements()
        return (server, romeo, juliet)
    }

    static func invite(_ to: String, reason: String = "") -> String {
        "<message to='garden@\(conference)' id='inv'><x xmlns='http://jabber.org/protocol/muc#user'><invite to='\(to)'><reason>\(reason)</reason></invite></x></message>"
    }

    @Test func theRoomPassesAnInvitationOnInItsOwnName() throws {
        let (_, romeo, juliet) = try Self.romeoInvites()
        romeo.send(Self.invite("juliet@localhost", reason: "Come"))
        let invitation = try juliet.receiveOne()
        #expect(invitation[attribute: "from"] == "garden@\(conference)")
        #expect(invitation[attribute: "id"] == "inv")
        let invite = invitation.child("x", namespace: NS.mucUser)?.child("invite", namespace: NS.mucUser)
        // Semi-anonymous: the inviter by its room address.
        #expect(invite?[attribute: "from"] == "garden@\(conference)/romeo")
        #expect(invite?.child("reason", namespace: NS.mucUser)?.text == "Come")
        #expect(invitation.child("x", namespace: NS.conferenceInvitation)?[attribute: "jid"] == "garden@\(conference)")
        #expect(invitation.childText("body")?.contains("invited you") == true)
        // The decline goes back to the inviter's resources.
        juliet.send(
            "<message to='garden@\(conference)'><x xmlns='http://jabber.org/protocol/muc#user'><decline to='garden@\(conference)/romeo'><reason>Busy</reason></decline></x></message>"
        )
        let decline = try romeo.receiveOne().child("x", namespace: NS.mucUser)?.child("decline", namespace: NS.mucUser)
        #expect(decline?[attribute: "from"] == "juliet@localhost")
        #expect(decline?.child("reason", namespace: NS.mucUser)?.text == "Busy")
    }

    @Test func anInvitationToSomeoneOfflineWaits() throws {
        let (server, romeo, _) = try Self.romeoInvites()
        romeo.send(Self.invite("mercutio@localhost"))
        #expect(romeo.receiveElements().isEmpty)
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        mercutio.send("<presence/>")
        let got = mercutio.receiveElements()
        #expect(got.contains { $0.child("x", namespace: NS.mucUser)?.child("invite", namespace: NS.mucUser) != nil })
    }

    @Test func inAMembersOnlyRoomOnlyAdminsInviteAndTheInviteeBecomesAMember() throws {
        let (_, romeo, juliet) = try Self.romeoInvites()
        _ = romeo.request(MUCConfigurationTests.submit(["muc#roomconfig_membersonly": "1"]), id: "c")
        romeo.send(Self.invite("juliet@localhost"))
        _ = juliet.receiveElements()
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["110"] })
        // Juliet, a member, may not invite: occupants may not by default.
        juliet.send(Self.invite("mercutio@localhost"))
        #expect(try juliet.receiveOne().errorCondition == "forbidden")
    }

    @Test func onlyOccupantsInvite() throws {
        let (_, romeo, juliet) = try Self.romeoInvites()
        // The invitation would carry the password: strangers may not ask.
        _ = romeo.request(
            MUCConfigurationTests.submit(["muc#roomconfig_passwordprotectedroom": "1", "muc#roomconfig_roomsecret": "x"]),
            id: "c")
        juliet.send(Self.invite("juliet@localhost"))
        #expect(try juliet.receiveOne().errorCondition == "not-acceptable")
        romeo.send(Self.invite("not a jid@@"))
        #expect(try romeo.receiveOne().errorCondition == "jid-malformed")
    }

    @Test func aMemberRegistersItsNicknameWhichNoOneElseMayTake() throws {
        let (server, romeo, juliet) = try Self.romeoInvites()
        let form = "<iq type='get' id='r' to='garden@\(conference)'><query xmlns='jabber:iq:register'/></iq>"
        #expect(juliet.request(form, id: "r")?.errorCondition == "registration-required")
        _ = romeo.request(MUCAdministrationTests.admin("<item jid='juliet@localhost' affiliation='member'/>"), id: "a")
        let fields = juliet.request(form, id: "r")?.child("query", namespace: NS.register)?
            .child("x", namespace: NS.dataForms).flatMap(DataForm.init)?.fields.compactMap(\.name)
        #expect(fields == ["FORM_TYPE", "muc#register_roomnick"])
        let register =
            "<iq type='set' id='s' to='garden@\(conference)'><query xmlns='jabber:iq:register'><x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE'><value>http://jabber.org/protocol/muc#register</value></field><field var='muc#register_roomnick'><value>jules</value></field></x></query></iq>"
        #expect(juliet.request(register, id: "s")?[attribute: "type"] == "result")
        let nick = juliet.request(
            "<iq type='get' id='n' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/disco#info' node='x-roomuser-item'/></iq>",
            id: "n")
        #expect(nick?.child("query", namespace: NS.discoInfo)?.child("identity", namespace: NS.discoInfo)?[attribute: "name"] == "jules")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        #expect(mercutio.join("garden", as: "jules").first?.errorCondition == "conflict")
        #expect(juliet.join("garden", as: "jules").contains { $0.mucStatuses == ["110"] })
        // A nickname someone else is using cannot be registered.
        let taken =
            "<iq type='set' id='t' to='garden@\(conference)'><query xmlns='jabber:iq:register'><x xmlns='jabber:x:data' type='submit'><field var='muc#register_roomnick'><value>romeo</value></field></x></query></iq>"
        #expect(juliet.request(taken, id: "t")?.errorCondition == "conflict")
        #expect(romeo.receiveElements().allSatisfy { $0[attribute: "type"] != "unavailable" })
        // Cancelling the registration ends the membership.
        let remove = "<iq type='set' id='x' to='garden@\(conference)'><query xmlns='jabber:iq:register'><remove/></query></iq>"
        #expect(juliet.request(remove, id: "x")?[attribute: "type"] == "result")
        #expect(juliet.request(form, id: "r")?.errorCondition == "registration-required")
    }
}
