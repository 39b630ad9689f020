import Foundation
import Testing
import XMPPClient
import XMPPCore
import XMPPTestSupport

/// Roster, subscriptions, presence and messages between two clients on
/// swiftletd.
@Suite("Client IM", .timeLimit(.clientSuite))
struct ClientIMTests {
    /// Alice and Bob, connected, friends with `both` subscriptions.
    static func friends(
        on server: some ClientTestServer, adjustBob: (inout ClientConfiguration) -> Void = { _ in }
    ) async throws -> (alice: XMPPClient, aliceEvents: EventRecorder, bob: XMPPClient, bobEvents: EventRecorder) {
        let (alice, aliceEvents, bob, bobEvents) = try await connectedPair(
            "alice", "bob", on: server, resources: ("a", "b"), adjustSecond: adjustBob)
        let bobJID = try JID("bob@localhost")
        let aliceJID = try JID("alice@localhost")
        try await alice.addContact(bobJID, name: "Bob", groups: ["Friends"])
        let request = try await bobEvents.first("a subscription request") {
            if case .subscriptionRequest(let from, _) = $0 { from } else { nil }
        }
        #expect(request == aliceJID)
        try await bob.acceptSubscription(from: aliceJID)
        try await aliceEvents.first("bob's roster item at both") {
            if case .roster(.updated(let c)) = $0, c.jid == bobJID, c.subscription == .both { c } else { nil }
        }
        try await bobEvents.first("alice's roster item at both") {
            if case .roster(.updated(let c)) = $0, c.jid == aliceJID, c.subscription == .both { c } else { nil }
        }
        return (alice, aliceEvents, bob, bobEvents)
    }

    /// Two registered users, connected, each with an event recorder.
    static func connectedPair(
        _ first: String, _ second: String, on server: some ClientTestServer,
        resources: (String?, String?) = (nil, nil), adjustSecond: (inout ClientConfiguration) -> Void = { _ in }
    ) async throws -> (XMPPClient, EventRecorder, XMPPClient, EventRecorder) {
        let one = try await server.registeredClient(first, resource: resources.0)
        let two = try await server.registeredClient(second, resource: resources.1, adjust: adjustSecond)
        let oneEvents = EventRecorder(one)
        let twoEvents = EventRecorder(two)
        try await one.connect()
        try await two.connect()
        return (one, oneEvents, two, twoEvents)
    }

    @Test("add contact, request, accept with subscribe-back: both rosters at both, presence flows")
    func subscriptionHandshake() async throws {
        try await ServerFixture.run { try await Self.subscriptionHandshake(on: $0) }
    }

    static func subscriptionHandshake(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, _) = try await Self.friends(on: server)
        let bobJID = try JID("bob@localhost")
        let item = try #require(await alice.roster.first { $0.jid == bobJID })
        #expect(item.name == "Bob")
        #expect(item.groups == ["Friends"])
        try await aliceEvents.first("bob's presence") {
            if case .presence(let p) = $0, p.jid.description == "bob@localhost/b", p.availability == .available {
                p
            } else { nil }
        }
        await bob.setPresence(.away, status: "lunch", priority: 5)
        let away = try await aliceEvents.first("bob away") {
            if case .presence(let p) = $0, p.availability == .away { p } else { nil }
        }
        #expect(away.status == "lunch")
        #expect(away.priority == 5)
        #expect(await alice.presences(of: bobJID).first?.availability == .away)
        await bob.disconnect()
        try await aliceEvents.first("bob's resource unavailable") {
            if case .presence(let p) = $0, p.jid.resourcepart == "b", p.availability == .unavailable { p } else { nil }
        }
        #expect(await alice.presences(of: bobJID).isEmpty)
        await alice.disconnect()
    }

    @Test("adding yourself or an existing contact is refused before anything is sent")
    func invalidAdds() async throws {
        try await ServerFixture.run { try await Self.invalidAdds(on: $0) }
    }

    static func invalidAdds(on server: some ClientTestServer) async throws {
        let (alice, _, bob, _) = try await Self.friends(on: server)
        await #expect(throws: XMPPClientError.self) { try await alice.addContact(try JID("alice@localhost")) }
        await #expect(throws: XMPPClientError.self) { try await alice.addContact(try JID("bob@localhost/x")) }
        await #expect(throws: XMPPClientError.self) { try await alice.removeContact(try JID("carol@localhost")) }
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("reject, then remove: the contact disappears from both sides' subscriptions")
    func rejectAndRemove() async throws {
        try await ServerFixture.run { try await Self.rejectAndRemove(on: $0) }
    }

    static func rejectAndRemove(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, carol, carolEvents) = try await connectedPair("alice", "carol", on: server)
        let carolJID = try JID("carol@localhost")
        try await alice.addContact(carolJID)
        try await carolEvents.first("request") { if case .subscriptionRequest = $0 { true } else { nil } }
        try await carol.rejectSubscription(from: try JID("alice@localhost"))
        try await aliceEvents.first("refusal") {
            if case .subscriptionAnswer(carolJID, false) = $0 { true } else { nil }
        }
        try await alice.removeContact(carolJID)
        try await aliceEvents.first("removal push") {
            if case .roster(.removed(carolJID)) = $0 { true } else { nil }
        }
        #expect(await alice.roster.isEmpty)
        await alice.disconnect()
        await carol.disconnect()
    }

    @Test("chat both ways, archived locally with conversations and unread counts")
    func chatAndArchive() async throws {
        try await ServerFixture.run { try await Self.chatAndArchive(on: $0) }
    }

    static func chatAndArchive(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await Self.friends(on: server)
        let bobJID = try JID("bob@localhost")
        let aliceJID = try JID("alice@localhost")
        let id = try await alice.send("Hi Bob — ünïcødé ✓", to: bobJID)
        let received = try await bobEvents.first("the message") {
            if case .message(let m) = $0 { m } else { nil }
        }
        #expect(received.id == id)
        #expect(received.body == "Hi Bob — ünïcødé ✓")
        #expect(received.from.description == "alice@localhost/a")
        #expect(!received.isDelayed)
        try await bob.send("Hi Alice", to: aliceJID)
        try await aliceEvents.first("bob's answer") { if case .message(let m) = $0 { m } else { nil } }

        let aliceSide = try await alice.conversation(with: bobJID)
        #expect(aliceSide.map(\.body) == ["Hi Bob — ünïcødé ✓", "Hi Alice"])
        #expect(aliceSide.map(\.isOutgoing) == [true, false])
        let recent = try await bob.recentConversations()
        #expect(recent.map(\.contact) == [aliceJID])
        #expect(recent.first?.lastMessage.body == "Hi Alice")
        #expect(recent.first?.unreadCount == 1)
        try await bob.markRead(aliceJID)
        #expect(try await bob.recentConversations().first?.unreadCount == 0)
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a message to an offline contact arrives at the next login, delayed and archived once")
    func offlineDelivery() async throws {
        try await ServerFixture.run { try await Self.offlineDelivery(on: $0) }
    }

    static func offlineDelivery(on server: some ClientTestServer) async throws {
        let (alice, _, bob, _) = try await Self.friends(on: server)
        await bob.disconnect()
        let bobJID = try JID("bob@localhost")
        try await alice.send("while you were out", to: bobJID)
        try await alice.send("second", to: bobJID)
        // Once the server answers, it has stored both for bob.
        try await alice.ping()
        let bobEvents = EventRecorder(bob)
        try await bob.connect()
        let first = try await bobEvents.first("the offline message") {
            if case .message(let m) = $0, m.body == "while you were out" { m } else { nil }
        }
        #expect(first.isDelayed)
        try await bobEvents.first("the second") { if case .message(let m) = $0, m.body == "second" { m } else { nil } }
        let archived = try await bob.conversation(with: try JID("alice@localhost"))
        #expect(archived.map(\.body) == ["while you were out", "second"])
        await alice.disconnect()
        await bob.disconnect()
    }

    @Test("a known contact's subscription request is approved automatically")
    func autoAcceptKnownContact() async throws {
        try await ServerFixture.run { try await Self.autoAcceptKnownContact(on: $0) }
    }

    static func autoAcceptKnownContact(on server: some ClientTestServer) async throws {
        let (alice, aliceEvents, bob, bobEvents) = try await connectedPair("alice", "bob", on: server)
        let aliceJID = try JID("alice@localhost")
        // Bob has Alice in his roster (without any subscription) before she asks.
        try await bob.addContact(aliceJID)
        try await alice.addContact(try JID("bob@localhost"))
        try await aliceEvents.first("bob's approval") {
            if case .subscriptionAnswer(_, true) = $0 { true } else { nil }
        }
        #expect(!bobEvents.all.contains { if case .subscriptionRequest = $0 { true } else { false } })
        await alice.disconnect()
        await bob.disconnect()
    }
}

/// The roster and archive kept in the client's SQLite file across clients.
@Suite("Client local store", .timeLimit(.clientSuite))
struct ClientLocalStoreTests {
    @Test("the roster is cached with its version, shown before connecting, and still right after a versioned fetch")
    func rosterCache() async throws {
        try await ServerFixture.run { server in
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("swiftlet-store-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/archive.sqlite"
            _ = try await server.registeredClient("alice")
            let first = try await server.registeredClient("carol") { $0.storePath = path }
            try await first.connect()
            try await first.addContact(try JID("alice@localhost"), name: "Alice")
            try await first.send("hello", to: try JID("alice@localhost"))
            await first.disconnect()
            let cached = try await ClientStore(path: path).cachedRoster(account: try JID("carol@localhost"))
            #expect(cached.version != nil)
            #expect(cached.contacts.map(\.name) == ["Alice"])

            var configuration = server.configuration("carol")
            configuration.storePath = path
            let second = try XMPPClient(configuration: configuration)
            #expect(await second.roster.map(\.name) == ["Alice"])
            #expect(try await second.conversation(with: try JID("alice@localhost")).map(\.body) == ["hello"])
            try await second.connect()
            #expect(await second.roster.map(\.name) == ["Alice"])
            #expect(await second.roster.first?.isPendingOut == true)
            await second.disconnect()
        }
    }
}
