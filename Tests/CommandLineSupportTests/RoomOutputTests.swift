import Foundation
import Testing
import XMPPCore
@testable import CommandLineSupport
@testable import XMPPClient

/// What `listen` and `room join` print for room events, `room occupants`
/// for occupants, `room list` for bookmarks, `room history` for messages.
@Suite struct RoomOutputTests {
    let room = try! JID("lounge@example.com")
    let noon = Timestamp.parse("2026-05-01T12:00:00.250Z")!

    func occupant(_ nick: String, jid: String? = nil, availability: Availability = .available, status: String? = nil)
        throws -> RoomOccupant
    {
        RoomOccupant(
            address: try room.withResource(nick), role: .moderator, affiliation: .owner, jid: try jid.map { try JID($0) },
            availability: availability, status: status)
    }

    @Test func lines() throws {
        let bob = try occupant("bob", jid: "bob@example.com/phone", availability: .away, status: "lunch")
        let cases: [(RoomEvent, String)] = [
            (.message(RoomMessage(id: "1", room: room, nick: "bob", body: "hi", timestamp: noon)),
             "room-message 2026-05-01T12:00:00Z lounge@example.com/bob: hi"),
            (.message(RoomMessage(id: "2", room: room, nick: "bob", body: "psst", timestamp: noon, isPrivate: true)),
             "room-message 2026-05-01T12:00:00Z lounge@example.com/bob (private): psst"),
            (.message(RoomMessage(id: "3", room: room, nick: "bob", body: "old", timestamp: noon, isDelayed: true)),
             "room-message 2026-05-01T12:00:00Z lounge@example.com/bob (delayed): old"),
            (.joined(room: room, nick: "alice", created: true), "room-presence lounge@example.com joined as alice (created)"),
            (.joinFailed(room: room, error: .stanzaError(.conflict, text: nil)),
             "room-presence lounge@example.com join failed: the server refused: conflict"),
            (.left(room: room, reason: .kicked(reason: "spam")), "room-presence lounge@example.com kicked: spam"),
            (.left(room: room, reason: .destroyed(reason: nil, alternate: try JID("den@example.com"))),
             "room-presence lounge@example.com destroyed: go to den@example.com"),
            (.occupantJoined(try occupant("carol")), "room-presence lounge@example.com/carol joined moderator owner"),
            (.occupantChanged(bob),
             "room-presence lounge@example.com/bob changed moderator owner away bob@example.com/phone: lunch"),
            (.occupantLeft(try occupant("carol"), reason: .banned(reason: nil)), "room-presence lounge@example.com/carol banned"),
            (.nickChanged(room: room, from: "bob", to: "bobby", isSelf: false), "room-presence lounge@example.com/bob now bobby"),
            (.subject(room: room, subject: "Friday", nick: "bob"), "room-subject lounge@example.com by bob: Friday"),
            (.invitation(RoomInvitation(room: room, inviter: try JID("carol@example.com"), reason: "come", isDirect: true)),
             "room-invitation lounge@example.com from carol@example.com (direct): come"),
        ]
        for (event, line) in cases {
            #expect(ClientEvent.room(event).line == line)
        }
    }

    @Test func json() throws {
        let message = ClientEvent.room(
            .message(RoomMessage(id: "1", room: room, nick: "bob", body: "hi", timestamp: noon, isOwn: true)))
        let decoded = try #require(JSONSerialization.jsonObject(with: Data(message.json.line.utf8)) as? NSDictionary)
        #expect(decoded == [
            "type": "room-message", "id": "1", "room": "lounge@example.com", "nick": "bob", "body": "hi",
            "timestamp": "2026-05-01T12:00:00.250Z", "delayed": false, "private": false, "own": true,
        ])
        let left = ClientEvent.room(.occupantLeft(try occupant("carol"), reason: .kicked(reason: "spam")))
        let leftFields = try #require(JSONSerialization.jsonObject(with: Data(left.json.line.utf8)) as? NSDictionary)
        #expect(leftFields["type"] as? String == "room-presence")
        #expect(leftFields["event"] as? String == "kicked")
        #expect(leftFields["reason"] as? String == "spam")
        #expect(leftFields["nick"] as? String == "carol")
        #expect(leftFields["role"] as? String == "moderator")
    }

    @Test func occupantsBookmarksAndArchive() throws {
        #expect(try occupant("bob", jid: "bob@example.com/phone").line == "bob  moderator  owner  bob@example.com/phone")
        #expect(try occupant("carol").line == "carol  moderator  owner")
        #expect(
            RoomBookmark(room: room, name: "Lounge", nick: "al", password: "secret", autojoin: true).line
                == "lounge@example.com  autojoin  nick al  \"Lounge\"")
        #expect(!RoomBookmark(room: room, password: "secret").json.line.contains("secret"))
        let archived = ArchivedMessage(
            account: try JID("alice@example.com"), contact: room, body: "hi", timestamp: noon, isOutgoing: false, id: "1",
            nick: "bob")
        #expect(archived.line == "2026-05-01T12:00:00Z lounge@example.com/bob: hi")
        #expect(archived.json.line.contains(#""nick":"bob""#))
    }

    @Test func onlyRoomKinds() throws {
        let invocation = try #require(
            { if case .run(let i) = try CommandLineParser.parse(["listen", "--only", "room-message,room-subject"]) { i } else { nil } }())
        let options = try ListenOptions(invocation)
        #expect(options.output(for: .room(.subject(room: room, subject: "x", nick: nil))) != nil)
        #expect(options.output(for: .room(.joined(room: room, nick: "a", created: false))) == nil)
    }
}
