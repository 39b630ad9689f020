import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// XEP-0045 §10: the owner's room: locked until configured, the
/// `muc#roomconfig` form, members-only and password rooms, and the end.
@Suite struct MUCConfigurationTests {
    /// A `muc#owner` set to the garden submitting `fields`.
    static func submit(_ fields: [String: String]) -> String {
        let body = fields.sorted { $0.key < $1.key }.map { "<field var='\($0.key)'><value>\($0.value)</value></field>" }
        return "<iq type='set' id='c' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'><field var='FORM_TYPE'><value>http://jabber.org/protocol/muc#roomconfig</value></field>\(body.joined())</x></query></iq>"
    }

    @Test func aNewRoomIsLockedUntilItsOwnerConfiguresIt() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        #expect(romeo.join("garden", as: "romeo").contains { $0.mucStatuses == ["201", "110"] })
        #expect(juliet.join("garden", as: "juliet").first?.errorCondition == "item-not-found")
        // A locked room is not listed.
        let items = romeo.request(
            "<iq type='get' id='i' to='\(conference)'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>", id: "i")
        #expect(items?.child("query", namespace: NS.discoItems)?.elements.isEmpty == true)
        #expect(romeo.request(Self.submit([:]), id: "c")?[attribute: "type"] == "result")
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["110"] })
    }

    @Test func aClientThatDoesNotKnowMUCCreatesAnOpenRoom() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        // Groupchat 1.0: no <x xmlns='…muc'/>, so no configuring to wait for.
        romeo.send("<presence to='garden@\(conference)/romeo'/>")
        _ = romeo.receiveElements()
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["110"] })
    }

    @Test func cancellingTheFirstConfigurationEndsTheRoom() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        _ = romeo.join("garden", as: "romeo")
        let cancel = romeo.request(
            "<iq type='set' id='c' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='cancel'/></query></iq>",
            id: "c")
        #expect(cancel?[attribute: "type"] == "result")
        // Juliet's join creates a new room, hers.
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["201", "110"] })
    }

    @Test func theFormShowsTheSettingsAndOnlyOwnersGetIt() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let get = "<iq type='get' id='g' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#owner'/></iq>"
        let answer = romeo.request(get, id: "g")
        let form = try #require(answer?.child("query", namespace: NS.mucOwner)?.child("x", namespace: NS.dataForms).flatMap(DataForm.init))
        #expect(form.formType == NS.mucRoomConfig)
        func value(_ name: String) -> String? { form.fields.first { $0.name == name }?.values.first }
        #expect(value("muc#roomconfig_persistentroom") == "0")
        #expect(value("muc#roomconfig_whois") == "moderators")
        #expect(value("muc#roomconfig_maxusers") == "200")
        #expect(juliet.request(get, id: "g")?.errorCondition == "forbidden")
        #expect(juliet.request(Self.submit([:]), id: "c")?.errorCondition == "forbidden")
    }

    @Test func aChangeIsAnnouncedAndDiscoShowsIt() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let answer = romeo.request(
            Self.submit([
                "muc#roomconfig_roomname": "The Garden", "muc#roomconfig_whois": "anyone",
                "muc#roomconfig_persistentroom": "1", "muc#roomconfig_publicroom": "0",
            ]), id: "c")
        #expect(answer?[attribute: "type"] == "result")
        #expect(try juliet.receiveOne().mucStatuses == ["104", "172"])
        let info = romeo.request(
            "<iq type='get' id='i' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>",
            id: "i")
        let features = info?.child("query", namespace: NS.discoInfo)?.elements.compactMap { $0[attribute: "var"] } ?? []
        #expect(features.contains("muc_persistent"))
        #expect(features.contains("muc_hidden"))
        #expect(features.contains("muc_nonanonymous"))
        #expect(info?.child("query", namespace: NS.discoInfo)?.child("identity", namespace: NS.discoInfo)?[attribute: "name"] == "The Garden")
        // Hidden: not listed.
        let items = romeo.request(
            "<iq type='get' id='l' to='\(conference)'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>", id: "l")
        #expect(items?.child("query", namespace: NS.discoItems)?.elements.isEmpty == true)
        // Everyone sees real JIDs now: a newcomer gets status 100.
        juliet.send("<presence to='garden@\(conference)/juliet' type='unavailable'/>")
        _ = juliet.receiveElements()
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["100", "110"] })
    }

    @Test func badValuesAreRefusedAndChangeNothing() throws {
        let (_, romeo, _) = try romeoAndJulietInTheGarden()
        #expect(romeo.request(Self.submit(["muc#roomconfig_maxusers": "100000"]), id: "c")?.errorCondition == "not-acceptable")
        #expect(romeo.request(Self.submit(["muc#roomconfig_moderatedroom": "maybe"]), id: "c")?.errorCondition == "bad-request")
        #expect(romeo.request(Self.submit(["muc#roomconfig_whois": "nobody"]), id: "c")?.errorCondition == "bad-request")
    }

    @Test func aMembersOnlyRoomSendsOutNonMembersAndLetsInMembers() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        _ = romeo.request(Self.submit(["muc#roomconfig_membersonly": "1"]), id: "c")
        let removed = try juliet.receiveOne()
        #expect(removed[attribute: "type"] == "unavailable")
        #expect(removed.mucStatuses == ["322", "110"])
        #expect(juliet.join("garden", as: "juliet").first?.errorCondition == "registration-required")
        _ = romeo.receiveElements()
        _ = romeo.request(MUCAdministrationTests.admin("<item jid='juliet@localhost' affiliation='member'/>"), id: "a")
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["110"] })
        // Taking the membership away sends her out with 321.
        _ = romeo.request(MUCAdministrationTests.admin("<item jid='juliet@localhost' affiliation='none'/>"), id: "a")
        #expect(try juliet.receiveOne().mucStatuses == ["321", "110"])
    }

    @Test func aPasswordRoomTakesThePassword() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send("<presence to='garden@\(conference)/juliet' type='unavailable'/>")
        _ = juliet.receiveElements()
        _ = romeo.request(
            Self.submit(["muc#roomconfig_passwordprotectedroom": "1", "muc#roomconfig_roomsecret": "balcony"]), id: "c")
        let refused = juliet.join("garden", as: "juliet").first
        #expect(refused?.errorCondition == "not-authorized")
        #expect(refused?.child("error")?[attribute: "by"] == "garden@\(conference)")
        #expect(juliet.join("garden", as: "juliet", "<password>balcony</password>").contains { $0.mucStatuses == ["110"] })
    }

    @Test func theOwnerDestroysTheRoomNamingAnother() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let answer = romeo.request(
            "<iq type='set' id='d' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#owner'><destroy jid='orchard@\(conference)'><reason>Moving</reason></destroy></query></iq>",
            id: "d")
        #expect(answer?[attribute: "type"] == "result")
        let gone = try juliet.receiveOne()
        #expect(gone[attribute: "type"] == "unavailable")
        let destroy = gone.child("x", namespace: NS.mucUser)?.child("destroy", namespace: NS.mucUser)
        #expect(destroy?[attribute: "jid"] == "orchard@\(conference)")
        #expect(destroy?.child("reason", namespace: NS.mucUser)?.text == "Moving")
        // Each occupant hears of its own leaving only.
        #expect(juliet.receiveElements().isEmpty)
        let info = romeo.request(
            "<iq type='get' id='i' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>",
            id: "i")
        #expect(info?.errorCondition == "item-not-found")
    }

    @Test func onlyTheNamedUsersCreateRooms() throws {
        var config = ServerConfig()
        config.muc.roomCreators = ["romeo@localhost"]
        let (_, romeo, juliet) = try romeoAndJuliet(config: config)
        #expect(juliet.join("garden", as: "juliet").first?.errorCondition == "not-allowed")
        romeo.create("garden", as: "romeo")
        #expect(juliet.join("garden", as: "juliet").contains { $0.mucStatuses == ["110"] })
    }
}
