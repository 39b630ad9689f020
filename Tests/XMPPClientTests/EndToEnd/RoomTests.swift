import Foundation
import Testing
@testable import XMPPClient
import XMPPCore
import XMPPTestSupport

/// Group chat (XEP-0045) between clients on swiftletd's room service, with
/// what that service supports today: instant rooms, joins, messages,
/// private messages, subject, nickname changes, leaving, rejoining after a
/// new session, and XEP-0402 bookmarks with autojoin.
@Suite("Client rooms", .timeLimit(.clientSuite))
struct RoomTests {
    static let room = try! JID("lounge@conference.localhost")

    /// Alice and Bob connected; Alice created `room` as an instant room
    /// and Bob joined it.
    static func aliceAndBobInRoom(
        on server: some ClientTestServer, adjustBob: (inout ClientConfiguration) -> Void = { _ in }
    ) async throws -> (alice: XMPPClient, aliceEvents: EventRecorder, bob: XMPPClient, bobEvents: EventRecorder) {
        let (alice, aliceEvents, bob, bobEvents) = try await ClientIMTests.connectedPair(
            "alice", "bob", on: server, resources: ("a", "b"), adjustSecond: adjustBob)
        try await alice.createRoom(room, nick: "alice")
        #expect(try await bob.joinRoom(room, nick: "bob") == false)
        try await aliceEvents.first("bob joining") {
            if case .room(.occupantJoined(let o)) = $0, o.nick == "bob" { o } else { nil }
        }
        return (alice, aliceEvents, bob, bobEvents)
    }

    @Test("creating an instant room makes us its owner; a joiner sees occupants with roles and the empty subject")
    func createAndJoin() async throws {
        try await ServerFixture.run { try await Self.createAndJoin(on: $0) }
    }

    static func createAndJoin(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
        #expect(aliceEvents.all.contains(.room(.joined(room: Self.room, nick: "alice", created: true))))
        #expect(bobEvents.all.contains(.room(.joined(room: Self.room, nick: "bob", created: false))))
        let seenByBob = await bob.occupants(of: Self.room)
        #expect(seenByBob.map(\.nick) == ["alice", "bob"])
        #expect(seenByBob.first?.role == .moderator)
        #expect(seenByBob.first?.affiliation == .owner)
        #expect(seenByBob.first?.jid == nil, "a participant does not see real JIDs in a semi-anonymous room")
        #expect(seenByBob.last?.role == .participant)
        #expect(seenByBob.last?.affiliation == RoomAffiliation.none)
        // The moderator sees Bob's real JID.
        let bobForAlice = await alice.occupants(of: Self.room).first { $0.nick == "bob" }
        #expect(bobForAlice?.jid == (try JID("bob@localhost/b")))
        try await bobEvents.first("the subject") {
            if case .room(.subject(Self.room, let subject, _)) = $0 { subject } else { nil }
        }
        #expect(await bob.subject(of: Self.room) == "")
        #expect(await bob.joinedRooms == [Self.room])
        #expect(await bob.nick(in: Self.room) == "bob")
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a nickname taken by someone else is refused with conflict, and the room is not kept")
    func nicknameConflict() async throws {
        try await ServerFixture.run { try await Self.nicknameConflict(on: $0) }
    }

    static func nicknameConflict(on server: some ClientTestServer) async throws {
        let (alice, _, bob, _) = try await Self.aliceAndBobInRoom(on: server)
        let carol = try await server.registeredClient("carol")
        try await carol.connect()
        do {
            try await carol.joinRoom(Self.room, nick: "bob")
            Issue.record("joined with a taken nickname")
        } catch {
            #expect(error.stanzaCondition == .conflict, "\(error)")
        }
        #expect(await carol.joinedRooms.isEmpty)
        #expect(await carol.nick(in: Self.room) == nil)
        await #expect(throws: XMPPClientError.self) { try await bob.joinRoom(Self.room, nick: "again") }
        for client in [alice, bob, carol] { await client.disconnect() }
    }

    @Test("group messages reach everyone, the sender's as its echo, and go into the local archive keyed by the room")
    func groupMessages() async throws {
        try await ServerFixture.run { try await Self.groupMessages(on: $0) }
    }

    static func groupMessages(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
        let id = try await alice.sendRoomMessage("hello room", to: Self.room)
        let atBob = try await bobEvents.first("alice's message") {
            if case .room(.message(let m)) = $0, m.body == "hello room" { m } else { nil }
        }
        #expect(atBob.id == id)
        #expect(atBob.nick == "alice")
        #expect(!atBob.isOwn)
        #expect(!atBob.isPrivate)
        #expect(!atBob.isDelayed)
        let echo = try await aliceEvents.first("the echo") {
            if case .room(.message(let m)) = $0, m.body == "hello room" { m } else { nil }
        }
        #expect(echo.isOwn)
        try await bob.sendRoomMessage("hi alice", to: Self.room)
        try await aliceEvents.first("bob's message") {
            if case .room(.message(let m)) = $0, m.body == "hi alice", m.nick == "bob" { m } else { nil }
        }
        let archived = try await alice.conversation(with: Self.room)
        #expect(archived.map(\.body) == ["hello room", "hi alice"])
        #expect(archived.map(\.nick) == ["alice", "bob"])
        #expect(archived.map(\.isOutgoing) == [true, false])
        // Not a one-to-one chat: no plain message events.
        #expect(!bobEvents.all.contains { if case .message = $0 { true } else { false } })
        await #expect(throws: XMPPClientError.invalidRequest("not in elsewhere@conference.localhost")) {
            try await alice.sendRoomMessage("hi", to: try JID("elsewhere@conference.localhost"))
        }
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a private message through the room arrives from the sender's nickname, marked private")
    func privateMessages() async throws {
        try await ServerFixture.run { try await Self.privateMessages(on: $0) }
    }

    static func privateMessages(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, _) = try await Self.aliceAndBobInRoom(on: server)
        try await bob.sendPrivateMessage("just you", to: "alice", in: Self.room)
        let received = try await aliceEvents.first("the private message") {
            if case .room(.message(let m)) = $0, m.body == "just you" { m } else { nil }
        }
        #expect(received.isPrivate)
        #expect(received.nick == "bob")
        #expect(received.room == Self.room)
        #expect(!aliceEvents.all.contains { if case .message = $0 { true } else { false } })
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a subject change reaches everyone with who set it")
    func subjectChange() async throws {
        try await ServerFixture.run { try await Self.subjectChange(on: $0) }
    }

    static func subjectChange(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
        try await alice.setSubject("Friday plans", of: Self.room)
        let change = try await bobEvents.first("the new subject") {
            if case .room(.subject(Self.room, "Friday plans", let nick)) = $0 { nick } else { nil }
        }
        #expect(change == "alice")
        #expect(await bob.subject(of: Self.room) == "Friday plans")
        try await aliceEvents.first("the subject at alice too") {
            if case .room(.subject(_, "Friday plans", _)) = $0 { true } else { nil }
        }
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("history on join: the latest messages, delayed, as many as asked")
    func historyOnJoin() async throws {
        try await ServerFixture.run { try await Self.historyOnJoin(on: $0) }
    }

    static func historyOnJoin(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, _) = try await Self.aliceAndBobInRoom(on: server)
        for text in ["one", "two", "three"] { try await alice.sendRoomMessage(text, to: Self.room) }
        try await aliceEvents.first("the last echo") {
            if case .room(.message(let m)) = $0, m.body == "three" { m } else { nil }
        }
        let carol = try await server.registeredClient("carol")
        let carolEvents = EventRecorder(carol)
        try await carol.connect()
        try await carol.joinRoom(Self.room, nick: "carol", history: RoomHistoryRequest(maxStanzas: 2))
        try await carolEvents.first("the subject after the history") {
            if case .room(.subject) = $0 { true } else { nil }
        }
        let history = carolEvents.all.compactMap { if case .room(.message(let m)) = $0 { m } else { nil } }
        #expect(history.map(\.body) == ["two", "three"])
        #expect(history.allSatisfy { $0.isDelayed })
        for client in [alice, bob, carol] { await client.disconnect() }
    }

    @Test("a nickname change moves the occupant; a taken one is refused")
    func nicknameChange() async throws {
        try await ServerFixture.run { try await Self.nicknameChange(on: $0) }
    }

    static func nicknameChange(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
        try await bob.changeNick(in: Self.room, to: "bobby")
        #expect(await bob.nick(in: Self.room) == "bobby")
        #expect(bobEvents.all.contains(.room(.nickChanged(room: Self.room, from: "bob", to: "bobby", isSelf: true))))
        try await aliceEvents.first("bob's new nickname") {
            if case .room(.nickChanged(Self.room, "bob", "bobby", false)) = $0 { true } else { nil }
        }
        try await aliceEvents.first("bobby's presence") {
            if case .room(.occupantChanged(let o)) = $0, o.nick == "bobby" { o } else { nil }
        }
        #expect(await alice.occupants(of: Self.room).map(\.nick) == ["alice", "bobby"])
        do {
            try await bob.changeNick(in: Self.room, to: "alice")
            Issue.record("took a taken nickname")
        } catch {
            #expect(error.stanzaCondition == .conflict, "\(error)")
        }
        #expect(await bob.nick(in: Self.room) == "bobby")
        #expect(await bob.joinedRooms == [Self.room])
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("leaving: the room confirms, the others see us go, and we are in no room")
    func leaving() async throws {
        try await ServerFixture.run { try await Self.leaving(on: $0) }
    }

    static func leaving(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
        try await bob.leaveRoom(Self.room)
        #expect(bobEvents.all.contains(.room(.left(room: Self.room, reason: .left))))
        #expect(await bob.joinedRooms.isEmpty)
        #expect(await bob.occupants(of: Self.room).isEmpty)
        let gone = try await aliceEvents.first("bob leaving") {
            if case .room(.occupantLeft(let o, let reason)) = $0, o.nick == "bob" { reason } else { nil }
        }
        #expect(gone == .left)
        #expect(await alice.occupants(of: Self.room).map(\.nick) == ["alice"])
        await #expect(throws: XMPPClientError.invalidRequest("not in \(Self.room)")) {
            try await bob.leaveRoom(Self.room)
        }
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a new session after a drop joins the rooms again; a resumed one is still in them")
    func rejoinAfterReconnect() async throws {
        try await ServerFixture.run(configure: { $0.timeouts.resume = .zero }) { server in
            let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
            server.dropConnection(of: try #require(await bob.boundJID))
            try await aliceEvents.first("bob gone with his session") {
                if case .room(.occupantLeft(let o, _)) = $0, o.nick == "bob" { o } else { nil }
            }
            try await bobEvents.first("bob in the room again") { event -> Int? in
                let joins = bobEvents.all.filter { if case .room(.joined(Self.room, "bob", _)) = $0 { true } else { false } }
                return joins.count == 2 ? 2 : nil
            }
            #expect(await bob.joinedRooms == [Self.room])
            // Bob's client and Alice's hear of the rejoin independently.
            try await aliceEvents.first("bob back in the room for alice") { _ -> Int? in
                let joins = aliceEvents.all.filter {
                    if case .room(.occupantJoined(let o)) = $0, o.nick == "bob" { true } else { false }
                }
                return joins.count == 2 ? 2 : nil
            }
            #expect(await alice.occupants(of: Self.room).map(\.nick) == ["alice", "bob"])
            try await alice.sendRoomMessage("welcome back", to: Self.room)
            try await bobEvents.first("a message after the rejoin") {
                if case .room(.message(let m)) = $0, m.body == "welcome back" { m } else { nil }
            }
            await alice.disconnect()
            await bob.disconnect()
        }
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
            #expect(await bob.isResumable)
            await bob.cutConnection()
            try await bobEvents.first("connected again") { event -> Int? in
                let count = bobEvents.all.filter { if case .connectionState(.connected) = $0 { true } else { false } }.count
                return count == 2 ? count : nil
            }
            try await alice.sendRoomMessage("still here?", to: Self.room)
            try await bobEvents.first("the message in the resumed session") {
                if case .room(.message(let m)) = $0, m.body == "still here?" { m } else { nil }
            }
            let joins = bobEvents.all.filter { if case .room(.joined) = $0 { true } else { false } }
            #expect(joins.count == 1, "a resumed session does not join again")
            #expect(!aliceEvents.all.contains { if case .room(.occupantLeft) = $0 { true } else { false } })
            #expect(await bob.joinedRooms == [Self.room])
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("a change of our presence reaches the rooms we are in")
    func presenceInRooms() async throws {
        try await ServerFixture.run { try await Self.presenceInRooms(on: $0) }
    }

    static func presenceInRooms(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, _) = try await Self.aliceAndBobInRoom(on: server)
        await bob.setPresence(.away, status: "brb")
        let away = try await aliceEvents.first("bob away in the room") {
            if case .room(.occupantChanged(let o)) = $0, o.nick == "bob", o.availability == .away { o } else { nil }
        }
        #expect(away.status == "brb")
        #expect(await alice.occupants(of: Self.room).first { $0.nick == "bob" }?.availability == .away)
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("disconnect() leaves every room, and a later connect() does not join them again")
    func disconnectLeavesRooms() async throws {
        try await ServerFixture.run { try await Self.disconnectLeavesRooms(on: $0) }
    }

    static func disconnectLeavesRooms(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await Self.aliceAndBobInRoom(on: server)
        await bob.disconnect()
        #expect(await bob.joinedRooms.isEmpty)
        #expect(await bob.nick(in: Self.room) == nil)
        await #expect(throws: XMPPClientError.notConnected) { try await bob.sendRoomMessage("hi", to: Self.room) }
        try await aliceEvents.first("bob gone") {
            if case .room(.occupantLeft(let o, .left)) = $0, o.nick == "bob" { o } else { nil }
        }
        try await bob.connect()
        try await bob.ping()
        #expect(await bob.joinedRooms.isEmpty)
        let joins = bobEvents.all.filter { if case .room(.joined) = $0 { true } else { false } }
        #expect(joins.count == 1)
        #expect(!bobEvents.all.contains { if case .presence(let p) = $0 { p.jid.bare == Self.room } else { false } })
        await #expect(throws: XMPPClientError.invalidRequest("not in \(Self.room)")) {
            try await bob.sendRoomMessage("hi", to: Self.room)
        }
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("bookmarks with autojoin (XEP-0402) are joined at login, with the bookmark's nickname")
    func bookmarksAutojoin() async throws {
        try await ServerFixture.run { try await Self.bookmarksAutojoin(on: $0) }
    }

    static func bookmarksAutojoin(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, _) = try await Self.aliceAndBobInRoom(on: server)
        let other = try JID("other@conference.localhost")
        try await bob.saveBookmark(RoomBookmark(room: Self.room, name: "Lounge", nick: "bob2", autojoin: true))
        try await bob.saveBookmark(RoomBookmark(room: other, autojoin: false))
        let saved = try await bob.bookmarks().sorted { $0.room < $1.room }
        #expect(saved == [
            RoomBookmark(room: Self.room, name: "Lounge", nick: "bob2", autojoin: true), RoomBookmark(room: other),
        ])
        // Another device of Bob's joins the autojoin room at login.
        let device = try XMPPClient(configuration: server.configuration("bob", resource: "phone"))
        let deviceEvents = EventRecorder(device)
        try await device.connect()
        try await deviceEvents.first("the autojoin") {
            if case .room(.joined(Self.room, "bob2", false)) = $0 { true } else { nil }
        }
        #expect(await device.joinedRooms == [Self.room])
        try await aliceEvents.first("bob2 joining") {
            if case .room(.occupantJoined(let o)) = $0, o.nick == "bob2" { o } else { nil }
        }
        // A bookmark marked autojoin on one device is joined by the
        // others already online (XEP-0402 §3.3).
        let den = try JID("den@conference.localhost")
        try await alice.createRoom(den, nick: "alice")
        try await bob.saveBookmark(RoomBookmark(room: den, nick: "bob-den", autojoin: true))
        try await deviceEvents.first("the den joined on notification") {
            if case .room(.joined(den, "bob-den", _)) = $0 { true } else { nil }
        }
        #expect(await device.joinedRooms == [den, Self.room])
        try await bob.removeBookmark(den)
        try await bob.removeBookmark(Self.room)
        #expect(try await bob.bookmarks() == [RoomBookmark(room: other)])
        // A client that does not join bookmarked rooms stays out.
        var quiet = server.configuration("bob", resource: "script")
        quiet.joinsBookmarkedRooms = false
        try await bob.saveBookmark(RoomBookmark(room: Self.room, autojoin: true))
        let script = try XMPPClient(configuration: quiet)
        try await script.connect()
        try await script.ping()
        #expect(await script.joinedRooms.isEmpty)
        #expect(await script.nick(in: Self.room) == nil)
        for client in [alice, bob, device, script] { await client.disconnect() }
    }

    @Test("a direct invitation (XEP-0249) reaches the invitee with the room and reason")
    func directInvitation() async throws {
        try await ServerFixture.run { try await Self.directInvitation(on: $0) }
    }

    static func directInvitation(on server: some ClientTestServer) async throws {
        let (alice, _, bob, _) = try await Self.aliceAndBobInRoom(on: server)
        let carol = try await server.registeredClient("carol", resource: "c")
        let carolEvents = EventRecorder(carol)
        try await carol.connect()
        try await alice.inviteDirectly(try JID("carol@localhost/c"), to: Self.room, reason: "come in")
        let invitation = try await carolEvents.first("the invitation") {
            if case .room(.invitation(let i)) = $0 { i } else { nil }
        }
        #expect(invitation.room == Self.room)
        #expect(invitation.reason == "come in")
        #expect(invitation.isDirect)
        #expect(invitation.inviter?.bare == (try JID("alice@localhost")))
        for client in [alice, bob, carol] { await client.disconnect() }
    }
}

extension XMPPClientError {
    /// The condition of a stanza error, whatever the server's text.
    var stanzaCondition: StanzaError.Condition? {
        if case .stanzaError(let condition, _) = self { condition } else { nil }
    }
}
