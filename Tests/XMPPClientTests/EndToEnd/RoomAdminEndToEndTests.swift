import Foundation
import Testing
@testable import XMPPClient
import XMPPCore
import XMPPTestSupport

/// Group chat administration (XEP-0045 §8-10) and room archives (XEP-0313)
/// between clients on swiftletd: configuration forms, password and
/// members-only rooms, kicks, bans, affiliations, mediated invitations and
/// a room's archive.
@Suite("Client room administration", .timeLimit(.clientSuite))
struct RoomAdminEndToEndTests {
    static let room = RoomTests.room

    @Test("a room created with settings is configured by its owner's form submission")
    func configuredCreation() async throws {
        try await ServerFixture.run { try await Self.configuredCreation(on: $0) }
    }

    static func configuredCreation(on server: some ClientTestServer) async throws {
        let alice = try await server.registeredClient("alice")
        try await alice.connect()
        try await alice.createRoom(Self.room, nick: "alice", settings: RoomSettings(name: "Lounge", isPersistent: true))
        let form = try await alice.roomConfiguration(of: Self.room)
        let values = Dictionary(form.fields.compactMap { f in f.name.map { ($0, f.values) } }, uniquingKeysWith: { $1 })
        #expect(values["muc#roomconfig_roomname"] == ["Lounge"])
        #expect(["1", "true"].contains(values["muc#roomconfig_persistentroom"]?.first ?? ""))
        try await alice.configureRoom(Self.room, with: RoomSettings(name: "Den"))
        let changed = try await alice.roomConfiguration(of: Self.room)
        #expect(changed.fields.first { $0.name == "muc#roomconfig_roomname" }?.values == ["Den"])
        await alice.disconnect()
    }

    @Test("a password room refuses a join without it (not-authorized) and admits one with it")
    func passwordRoom() async throws {
        try await ServerFixture.run { try await Self.passwordRoom(on: $0) }
    }

    static func passwordRoom(on server: some ClientTestServer) async throws {
        let (alice, _, bob, _) = try await ClientIMTests.connectedPair("alice", "bob", on: server)
        try await alice.createRoom(Self.room, nick: "alice", settings: RoomSettings(password: "sesame"))
        await #expect(throws: XMPPClientError.self) { try await bob.joinRoom(Self.room, nick: "bob") }
        #expect(await bob.joinedRooms.isEmpty)
        try await bob.joinRoom(Self.room, nick: "bob", password: "sesame")
        #expect(await bob.joinedRooms == [Self.room])
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a members-only room admits a user once the owner made them a member")
    func membersOnlyRoom() async throws {
        try await ServerFixture.run { try await Self.membersOnlyRoom(on: $0) }
    }

    static func membersOnlyRoom(on server: some ClientTestServer) async throws {
        let (alice, _, bob, _) = try await ClientIMTests.connectedPair("alice", "bob", on: server)
        try await alice.createRoom(Self.room, nick: "alice", settings: RoomSettings(isMembersOnly: true))
        do {
            try await bob.joinRoom(Self.room, nick: "bob")
            Issue.record("a non-member joined a members-only room")
        } catch {
            #expect(error.stanzaCondition == .registrationRequired, "\(error)")
        }
        try await alice.setAffiliation(.member, of: try JID("bob@localhost"), in: Self.room)
        try await bob.joinRoom(Self.room, nick: "bob")
        let bobSeen = await bob.occupants(of: Self.room).first { $0.nick == "bob" }
        #expect(bobSeen?.affiliation == .member)
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a moderator kicks an occupant, who is told why and is out of the room")
    func kick() async throws {
        try await ServerFixture.run { try await Self.kick(on: $0) }
    }

    static func kick(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await RoomTests.aliceAndBobInRoom(on: server)
        try await alice.kick("bob", from: Self.room, reason: "spam")
        let reason = try await bobEvents.first("bob kicked") {
            if case .room(.left(Self.room, let reason)) = $0 { reason } else { nil }
        }
        #expect(reason == .kicked(reason: "spam"))
        #expect(await bob.joinedRooms.isEmpty)
        try await aliceEvents.first("bob's kick seen by alice") {
            if case .room(.occupantLeft(let o, .kicked)) = $0, o.nick == "bob" { o } else { nil }
        }
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("an owner bans a user, who is removed and cannot join again (forbidden)")
    func ban() async throws {
        try await ServerFixture.run { try await Self.ban(on: $0) }
    }

    static func ban(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await RoomTests.aliceAndBobInRoom(on: server)
        try await alice.ban(try JID("bob@localhost"), from: Self.room, reason: "enough")
        let reason = try await bobEvents.first("bob banned") {
            if case .room(.left(Self.room, let reason)) = $0 { reason } else { nil }
        }
        #expect(reason == .banned(reason: "enough"))
        try await aliceEvents.first("bob's ban seen by alice") {
            if case .room(.occupantLeft(let o, .banned)) = $0, o.nick == "bob" { o } else { nil }
        }
        do {
            try await bob.joinRoom(Self.room, nick: "bob")
            Issue.record("a banned user joined again")
        } catch {
            #expect(error.stanzaCondition == .forbidden, "\(error)")
        }
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("the lists of members and outcasts show whom the owner made so")
    func affiliationLists() async throws {
        try await ServerFixture.run { try await Self.affiliationLists(on: $0) }
    }

    static func affiliationLists(on server: some ClientTestServer) async throws {
        let alice = try await server.registeredClient("alice")
        try await alice.connect()
        try await alice.createRoom(Self.room, nick: "alice")
        let bob = try JID("bob@localhost")
        let carol = try JID("carol@localhost")
        try await alice.setAffiliation(.member, of: bob, in: Self.room)
        try await alice.ban(carol, from: Self.room)
        #expect(try await alice.users(with: .member, in: Self.room).map(\.jid) == [bob])
        #expect(try await alice.users(with: .outcast, in: Self.room).map(\.jid) == [carol])
        #expect(try await alice.users(with: .owner, in: Self.room).map(\.jid) == [try JID("alice@localhost")])
        try await alice.setAffiliation(.none, of: bob, in: Self.room)
        #expect(try await alice.users(with: .member, in: Self.room).isEmpty)
        await alice.disconnect()
    }

    @Test("destroying a room tells its occupants why and where to go")
    func destroy() async throws {
        try await ServerFixture.run { try await Self.destroy(on: $0) }
    }

    static func destroy(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await RoomTests.aliceAndBobInRoom(on: server)
        let den = try JID("den@conference.localhost")
        try await alice.destroyRoom(Self.room, reason: "moving", alternate: den)
        let reason = try await bobEvents.first("the room destroyed") {
            if case .room(.left(Self.room, let reason)) = $0 { reason } else { nil }
        }
        #expect(reason == .destroyed(reason: "moving", alternate: den))
        try await aliceEvents.first("alice out of it too") {
            if case .room(.left(Self.room, .destroyed)) = $0 { true } else { nil }
        }
        #expect(await bob.joinedRooms.isEmpty)
        #expect(await alice.joinedRooms.isEmpty)
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("an affiliation granted to an occupant shows in everyone's presence of them")
    func grantAffiliation() async throws {
        try await ServerFixture.run { try await Self.grantAffiliation(on: $0) }
    }

    static func grantAffiliation(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await RoomTests.aliceAndBobInRoom(on: server)
        try await alice.setAffiliation(.admin, of: try JID("bob@localhost"), in: Self.room)
        try await aliceEvents.first("bob an admin") {
            if case .room(.occupantChanged(let o)) = $0, o.nick == "bob", o.affiliation == .admin { o } else { nil }
        }
        try await bobEvents.first("bob told he is an admin") {
            if case .room(.occupantChanged(let o)) = $0, o.nick == "bob", o.affiliation == .admin { o } else { nil }
        }
        #expect(await bob.occupants(of: Self.room).first { $0.nick == "bob" }?.affiliation == .admin)
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("an invitation through the room reaches the invitee from the room, naming the inviter")
    func mediatedInvitation() async throws {
        try await ServerFixture.run { try await Self.mediatedInvitation(on: $0) }
    }

    static func mediatedInvitation(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, _) = try await RoomTests.aliceAndBobInRoom(on: server)
        let carol = try await server.registeredClient("carol")
        let carolEvents = EventRecorder(carol)
        try await carol.connect()
        try await alice.invite(try JID("carol@localhost"), to: Self.room, reason: "join us")
        // A refusal comes back before the answer to a later ping.
        try await alice.ping()
        let refusal = aliceEvents.all.first { if case .messageFailed = $0 { true } else { false } }
        try #require(refusal == nil, "the room refused the invitation: \(String(describing: refusal))")
        let invitation = try await carolEvents.first("the invitation") {
            if case .room(.invitation(let i)) = $0 { i } else { nil }
        }
        #expect(invitation.room == Self.room)
        #expect(!invitation.isDirect)
        #expect(invitation.reason == "join us")
            // The inviter as the room names them: a real JID or their room address.
        let inviter = try #require(invitation.inviter)
        let aliceJID = try JID("alice@localhost")
        let aliceInRoom = try JID("\(Self.room)/alice")
        #expect(inviter.bare == aliceJID || inviter == aliceInRoom, "\(inviter)")
        for client in [alice, bob, carol] { await client.disconnect() }
    }

    @Test("a room's archive (XEP-0313 at the room) gives a newcomer earlier messages with nicknames, kept locally")
    func roomArchive() async throws {
        try await ServerFixture.run { try await Self.roomArchive(on: $0) }
    }

    static func roomArchive(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, _) = try await RoomTests.aliceAndBobInRoom(on: server)
        try await alice.sendRoomMessage("first", to: Self.room)
        try await aliceEvents.first("alice's echo") {
            if case .room(.message(let m)) = $0, m.body == "first" { m } else { nil }
        }
        try await bob.sendRoomMessage("second", to: Self.room)
        try await aliceEvents.first("bob's message") {
            if case .room(.message(let m)) = $0, m.body == "second" { m } else { nil }
        }
        let carol = try await server.registeredClient("carol")
        try await carol.connect()
        try await carol.joinRoom(Self.room, nick: "carol", history: .none)
        let page = try await carol.roomHistory(of: Self.room, limit: 10)
        #expect(page.map(\.body) == ["first", "second"])
        #expect(page.map(\.nick) == ["alice", "bob"])
        #expect(page.allSatisfy { $0.serverID != nil && $0.contact == Self.room })
        #expect(try await carol.conversation(with: Self.room).map(\.body) == ["first", "second"])
        let older = try await carol.roomHistory(of: Self.room, before: page.last?.serverID, limit: 10)
        #expect(older.map(\.body) == ["first"])
        for client in [alice, bob, carol] { await client.disconnect() }
    }
}
