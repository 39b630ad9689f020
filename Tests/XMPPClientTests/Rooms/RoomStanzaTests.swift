import Foundation
import Testing
@testable import XMPPClient
import XMPPCore

/// Reading what rooms send and writing what we send them, without a
/// connection: occupant presence and its status codes, invitations,
/// configuration forms, bookmarks, history requests.
@Suite("Room stanzas")
struct RoomStanzaTests {
    static let room = try! JID("lounge@conference.localhost")

    /// A presence from `room/nick` with a `muc#user` item and `codes`.
    static func occupantPresence(
        _ nick: String, type: String? = nil, role: String = "participant", affiliation: String = "none",
        jid: String? = nil, newNick: String? = nil, codes: [Int] = [], reason: String? = nil, extra: [Element] = []
    ) -> Presence {
        var item = Element(
            "item", namespace: NS.mucUser, attributes: [Attribute("role", role), Attribute("affiliation", affiliation)])
        if let jid { item[attribute: "jid"] = jid }
        if let newNick { item[attribute: "nick"] = newNick }
        if let reason { item.append(Element("reason", namespace: NS.mucUser, children: [.text(reason)])) }
        var x = Element("x", namespace: NS.mucUser, children: [.element(item)])
        for code in codes { x.append(Element("status", namespace: NS.mucUser, attributes: ["code": String(code)])) }
        for element in extra { x.append(element) }
        var presence = Presence(type: type == "unavailable" ? .unavailable : .available)
        presence.element[attribute: "from"] = "\(room)/\(nick)"
        presence.element.append(x)
        return presence
    }

    @Test("an occupant's presence gives nickname, role, affiliation, real JID, show and status")
    func occupantFields() throws {
        var presence = Self.occupantPresence("bob", role: "moderator", affiliation: "owner", jid: "bob@localhost/b")
        presence.show = .away
        presence.status = "lunch"
        let parsed = try #require(OccupantPresence(presence))
        #expect(parsed.occupant.nick == "bob")
        #expect(parsed.occupant.room == Self.room)
        #expect(parsed.occupant.role == .moderator)
        #expect(parsed.occupant.affiliation == .owner)
        #expect(parsed.occupant.jid == (try JID("bob@localhost/b")))
        #expect(parsed.occupant.availability == .away)
        #expect(parsed.occupant.status == "lunch")
        #expect(!parsed.isSelf)
    }

    @Test("presence without a muc#user item, or from a bare JID, is not an occupant's")
    func notOccupantPresence() throws {
        var plain = Presence()
        plain.element[attribute: "from"] = "\(Self.room)/bob"
        #expect(OccupantPresence(plain) == nil)
        var bare = Self.occupantPresence("bob")
        bare.element[attribute: "from"] = Self.room.description
        #expect(OccupantPresence(bare) == nil)
    }

    @Test("status codes become events: joined, created, changed, left, kicked, banned, nick change, destroyed")
    func statusCodesToEvents() throws {
        let bob = try #require(OccupantPresence(Self.occupantPresence("bob")))
        #expect(bob.event(knownBefore: false) == .occupantJoined(bob.occupant))
        #expect(bob.event(knownBefore: true) == .occupantChanged(bob.occupant))

        let me = try #require(OccupantPresence(Self.occupantPresence("me", role: "moderator", affiliation: "owner", codes: [201, 110])))
        #expect(me.event(knownBefore: false) == .joined(room: Self.room, nick: "me", created: true))
        let meAgain = try #require(OccupantPresence(Self.occupantPresence("me", codes: [110])))
        #expect(meAgain.event(knownBefore: false) == .joined(room: Self.room, nick: "me", created: false))

        let left = try #require(OccupantPresence(Self.occupantPresence("bob", type: "unavailable", role: "none")))
        #expect(left.event(knownBefore: true) == .occupantLeft(left.occupant, reason: .left))

        let kicked = try #require(
            OccupantPresence(Self.occupantPresence("bob", type: "unavailable", role: "none", codes: [307], reason: "spam")))
        #expect(kicked.event(knownBefore: true) == .occupantLeft(kicked.occupant, reason: .kicked(reason: "spam")))

        let banned = try #require(
            OccupantPresence(
                Self.occupantPresence("me", type: "unavailable", role: "none", affiliation: "outcast", codes: [301, 110])))
        #expect(banned.event(knownBefore: true) == .left(room: Self.room, reason: .banned(reason: nil)))

        let renamed = try #require(
            OccupantPresence(Self.occupantPresence("bob", type: "unavailable", newNick: "bobby", codes: [303])))
        #expect(renamed.event(knownBefore: true) == .nickChanged(room: Self.room, from: "bob", to: "bobby", isSelf: false))

        let destroy = Element(
            "destroy", namespace: NS.mucUser, attributes: ["jid": "elsewhere@conference.localhost"],
            children: [.element(Element("reason", namespace: NS.mucUser, children: [.text("moved")]))])
        let destroyed = try #require(
            OccupantPresence(Self.occupantPresence("me", type: "unavailable", role: "none", codes: [110], extra: [destroy])))
        #expect(
            destroyed.event(knownBefore: true)
                == .left(
                    room: Self.room, reason: .destroyed(reason: "moved", alternate: try JID("elsewhere@conference.localhost"))))

        for (code, reason) in [(321, RoomExitReason.affiliationChanged), (322, .membersOnly), (332, .shutdown)] {
            let removed = try #require(OccupantPresence(Self.occupantPresence("bob", type: "unavailable", codes: [code])))
            #expect(removed.exitReason == reason, "\(code)")
        }
    }

    @Test("a mediated invitation comes from the room's bare JID; a direct one names the room in jabber:x:conference")
    func invitations() throws {
        let invite = Element(
            "invite", namespace: NS.mucUser, attributes: ["from": "carol@localhost/c"],
            children: [.element(Element("reason", namespace: NS.mucUser, children: [.text("join us")]))])
        var mediated = Message(to: try JID("bob@localhost"))
        mediated.element[attribute: "from"] = Self.room.description
        mediated.element.append(
            Element(
                "x", namespace: NS.mucUser,
                children: [
                    .element(invite), .element(Element("password", namespace: NS.mucUser, children: [.text("pw")])),
                ]))
        #expect(
            RoomInvitation(mediated)
                == RoomInvitation(
                    room: Self.room, inviter: try JID("carol@localhost/c"), reason: "join us", password: "pw",
                    isDirect: false))

        let sent = RoomInvitation(room: Self.room, inviter: nil, reason: "come", password: "pw", isDirect: true)
        var direct = Message(to: try JID("bob@localhost"))
        direct.element[attribute: "from"] = "carol@localhost/c"
        direct.element.append(sent.directElement)
        #expect(
            RoomInvitation(direct)
                == RoomInvitation(
                    room: Self.room, inviter: try JID("carol@localhost/c"), reason: "come", password: "pw", isDirect: true))

        var chat = Message(type: .chat, to: try JID("bob@localhost"), body: "hi")
        chat.element[attribute: "from"] = "carol@localhost/c"
        #expect(RoomInvitation(chat) == nil)
    }

    @Test("settings become the muc#roomconfig fields the room's form offers; one it lacks is refused")
    func settingsForm() throws {
        let offered = DataForm(
            type: "form",
            fields: [
                DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.mucRoomConfig]),
                DataForm.Field("muc#roomconfig_roomname"),
                DataForm.Field("muc#roomconfig_persistentroom", type: "boolean", values: ["0"]),
                DataForm.Field("muc#roomconfig_passwordprotectedroom", type: "boolean"),
                DataForm.Field("muc#roomconfig_roomsecret", type: "text-private"),
            ])
        let settings = RoomSettings(name: "Lounge", isPersistent: true, password: "pw")
        let submitted = try settings.submission(for: offered)
        #expect(submitted.type == "submit")
        #expect(submitted.formType == NS.mucRoomConfig)
        let values = Dictionary(uniqueKeysWithValues: submitted.fields.map { ($0.name ?? "", $0.values) })
        #expect(values["muc#roomconfig_roomname"] == ["Lounge"])
        #expect(values["muc#roomconfig_persistentroom"] == ["1"])
        #expect(values["muc#roomconfig_passwordprotectedroom"] == ["1"])
        #expect(values["muc#roomconfig_roomsecret"] == ["pw"])
        #expect(submitted.fields.count == 5)
        #expect(throws: XMPPClientError.self) { try RoomSettings(isMembersOnly: true).submission(for: offered) }
        // A form with the secret alone (Prosody's) takes a password too.
        let secretOnly = DataForm(type: "form", fields: offered.fields.filter { $0.name != "muc#roomconfig_passwordprotectedroom" })
        let withSecret = try RoomSettings(password: "pw").submission(for: secretOnly)
        #expect(withSecret.fields.compactMap(\.name) == ["FORM_TYPE", "muc#roomconfig_roomsecret"])
        #expect(RoomSettings().isEmpty)
        #expect(!settings.isEmpty)
    }

    @Test("a bookmark survives its PubSub item; autojoin reads true and 1")
    func bookmarkItem() throws {
        let bookmark = RoomBookmark(room: Self.room, name: "Lounge", nick: "al", password: "pw", autojoin: true)
        let item = Element(
            "item", namespace: NS.pubsub, attributes: ["id": Self.room.description],
            children: [.element(bookmark.conference)])
        #expect(RoomBookmark(item: item) == bookmark)
        var numeric = bookmark.conference
        numeric[attribute: "autojoin"] = "1"
        let numericItem = Element(
            "item", namespace: NS.pubsub, attributes: ["id": Self.room.description], children: [.element(numeric)])
        #expect(RoomBookmark(item: numericItem)?.autojoin == true)
        let plain = RoomBookmark(room: Self.room)
        #expect(plain.conference[attribute: "autojoin"] == nil)
        let notBookmark = Element("item", namespace: NS.pubsub, attributes: ["id": Self.room.description])
        #expect(RoomBookmark(item: notBookmark) == nil)
    }

    @Test("the history request writes only the limits given, since as an XEP-0082 time")
    func historyRequest() throws {
        #expect(RoomHistoryRequest().element == nil)
        #expect(RoomHistoryRequest.none.element?[attribute: "maxstanzas"] == "0")
        let since = Date(timeIntervalSince1970: 1_800_000_000.25)
        let element = try #require(RoomHistoryRequest(maxChars: 500, seconds: 60, since: since).element)
        #expect(element[attribute: "maxchars"] == "500")
        #expect(element[attribute: "seconds"] == "60")
        #expect(element[attribute: "maxstanzas"] == nil)
        #expect(element[attribute: "since"] == "2027-01-15T08:00:00.250Z")
    }

    @Test("a rejoin asks for what came after the newest message seen, and keeps nick and password")
    func rejoinState() throws {
        var state = JoinedRoom(nick: "al", password: "pw", history: RoomHistoryRequest(maxStanzas: 20))
        state.isJoined = true
        state.subject = "hi"
        #expect(state.forRejoining.history == RoomHistoryRequest(maxStanzas: 20))
        let newest = Date(timeIntervalSince1970: 1_800_000_000)
        state.newestMessage = newest
        let rejoining = state.forRejoining
        #expect(rejoining.history == RoomHistoryRequest(since: newest))
        #expect(!rejoining.isJoined)
        #expect(rejoining.subject == nil)
        #expect(rejoining.nick == "al")
        let request = try #require(rejoining.joinRequest(to: Self.room, presence: Presence()))
        #expect(request[attribute: "to"] == "\(Self.room)/al")
        let x = try #require(request.child("x", namespace: NS.muc))
        #expect(x.childText("password", namespace: NS.muc) == "pw")
        #expect(x.child("history", namespace: NS.muc)?[attribute: "since"] != nil)
    }
}
