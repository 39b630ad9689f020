import Foundation
import Testing
@testable import XMPPClient
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// Reconnecting after drops, against swiftletd on loopback.
@Suite("Client reconnect", .timeLimit(.clientSuite))
struct ReconnectTests {
    @Test("a dropped connection comes back, presence re-sent, and what was sent meanwhile arrives")
    func reconnectsAfterDrop() async throws {
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let bobFull = try #require(await bob.boundJID)
            server.dropConnection(of: bobFull)
            try await bobEvents.first("reconnecting") {
                if case .connectionState(.reconnecting) = $0 { true } else { nil }
            }
            try await aliceEvents.first("bob's resource unavailable") {
                if case .presence(let p) = $0, p.jid == bobFull, p.availability == .unavailable { p } else { nil }
            }
            try await alice.send("sent while you were away", to: try JID("bob@localhost"))
            let back = try await bobEvents.first("the message after reconnecting") {
                if case .message(let m) = $0, m.body == "sent while you were away" { m } else { nil }
            }
            #expect(back.isDelayed)
            #expect(await bob.state == .connected(bobFull))
            let connectedCount = bobEvents.all.filter {
                if case .connectionState(.connected) = $0 { true } else { false }
            }.count
            #expect(connectedCount == 2)
            try await aliceEvents.first("bob available again after being unavailable") { event -> Bool? in
                let presences = aliceEvents.all.compactMap { if case .presence(let p) = $0 { p } else { nil } }
                let drop = presences.firstIndex { $0.jid == bobFull && $0.availability == .unavailable }
                return drop.map { presences[$0...].contains { $0.availability == .available } } == true ? true : nil
            }
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("after disconnect() a drop is not followed by reconnecting")
    func cleanDisconnectStays() async throws {
        try await ServerFixture.run { try await Self.cleanDisconnectStays(on: $0) }
    }

    static func cleanDisconnectStays(on server: some ClientTestServer) async throws {
        let client = try await server.registeredClient("alice")
        let events = EventRecorder(client)
        try await client.connect()
        await client.disconnect()
        // Whatever ended the connection, the client no longer wants one, so
        // no reconnect is scheduled, now or later.
        #expect(await !client.wantsConnection)
        #expect(!events.all.contains { if case .connectionState(.reconnecting) = $0 { true } else { false } })
        #expect(await client.state == .disconnected(nil))
    }

    @Test("the conflict stream error (same resource elsewhere) stops reconnecting")
    func conflictStops() async throws {
        try await ServerFixture.run { try await Self.conflictStops(on: $0) }
    }

    static func conflictStops(on server: some ClientTestServer) async throws {
        let first = try await server.registeredClient("alice", resource: "same")
        let events = EventRecorder(first)
        try await first.connect()
        let second = try XMPPClient(configuration: server.configuration("alice", resource: "same"))
        try await second.connect()
        let ended = try await events.first("disconnected with conflict") {
            if case .connectionState(.disconnected(let error)) = $0 { error } else { nil }
        }
        guard case .streamError(.conflict, _) = ended else {
            Issue.record("expected the conflict stream error, got \(String(describing: ended))")
            return
        }
        // The turn that published the end also gave up the connection: no
        // reconnect is scheduled, now or later.
        #expect(await !first.wantsConnection)
        #expect(!events.all.contains { if case .connectionState(.reconnecting) = $0 { true } else { false } })
        await second.disconnect()
    }
}

@Suite("Reconnect policy")
struct ReconnectPolicyTests {
    @Test("delays double from the initial one up to the maximum, jitter within ±20 %")
    func backoff() {
        let policy = ReconnectPolicy()
        #expect(policy.delay(forAttempt: 1, random: 0.5) == .seconds(1))
        #expect(policy.delay(forAttempt: 2, random: 0.5) == .seconds(2))
        #expect(policy.delay(forAttempt: 4, random: 0.5) == .seconds(8))
        #expect(policy.delay(forAttempt: 30, random: 0.5) == .seconds(60))
        #expect(policy.delay(forAttempt: 1000, random: 0.5) == .seconds(60))
        #expect(policy.delay(forAttempt: 4, random: 0) == .milliseconds(6400))
        #expect(policy.delay(forAttempt: 4, random: 0.999_999) <= .milliseconds(9600))
        #expect(policy.delay(forAttempt: 4, random: 0.999_999) > .milliseconds(9599))
    }
}

extension XMPPClient {
    /// Cuts the client's TCP connection as a network drop would: no
    /// closing tag, no unavailable presence.
    func cutConnection() {
        connection?.transport.abort(.cannotConnect("connection cut by the test"))
    }
}

@Suite("Client stream management", .timeLimit(.clientSuite))
struct ClientStreamManagementTests {
    @Test("after a drop the session is resumed: nothing sent meanwhile is lost or doubled, contacts never saw it go")
    func resumesAfterDrop() async throws {
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            #expect(await bob.isResumable)
            let bobFull = try #require(await bob.boundJID)
            await bob.cutConnection()
            try await bobEvents.first("reconnecting") {
                if case .connectionState(.reconnecting) = $0 { true } else { nil }
            }
            try await alice.send("one", to: bobFull)
            try await alice.send("two", to: bobFull)
            let connected = try await bobEvents.first("connected again") { event -> Int? in
                let count = bobEvents.all.filter { if case .connectionState(.connected) = $0 { true } else { false } }.count
                return count == 2 ? count : nil
            }
            #expect(connected == 2)
            #expect(await bob.boundJID == bobFull)
            try await bobEvents.first("the second message") {
                if case .message(let m) = $0, m.body == "two" { m } else { nil }
            }
            // The server's stanzas are handled in order: a copy sent again
            // would have arrived before the ping's answer.
            try await bob.ping()
            let bodies = bobEvents.all.compactMap { if case .message(let m) = $0 { m.body } else { nil } }
            #expect(bodies == ["one", "two"])
            #expect(!aliceEvents.all.contains {
                if case .presence(let p) = $0 { p.jid == bobFull && p.availability == .unavailable } else { false }
            })
            // Messages from bob still flow after resuming.
            try await bob.send("back", to: try JID("alice@localhost"))
            try await aliceEvents.first("bob's message") { if case .message(let m) = $0, m.body == "back" { m } else { nil } }
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("with resumption off on the server, a drop ends in a fresh session and offline delivery")
    func noResumptionFallsBack() async throws {
        try await ServerFixture.run(configure: { $0.timeouts.resume = .zero }) { server in
            // Bob's reconnect delay runs on a clock that moves only when
            // the message is stored for him.
            let clock = ManualClock()
            let (alice, aliceEvents, bob, bobEvents) = try await ClientIMTests.friends(on: server) { $0.clock = clock }
            #expect(await !bob.isResumable)
            let bobFull = try #require(await bob.boundJID)
            await bob.cutConnection()
            try await bobEvents.first("reconnecting") {
                if case .connectionState(.reconnecting) = $0 { true } else { nil }
            }
            try await aliceEvents.first("bob's session ended") {
                if case .presence(let p) = $0, p.jid == bobFull, p.availability == .unavailable { p } else { nil }
            }
            try await alice.send("kept for you", to: try JID("bob@localhost"))
            try await alice.ping()
            try await clock.waitForSleepers()
            clock.advance(by: .seconds(1))
            let message = try await bobEvents.first("the message") {
                if case .message(let m) = $0, m.body == "kept for you" { m } else { nil }
            }
            #expect(message.isDelayed)
            await alice.disconnect()
            await bob.disconnect()
        }
    }
}

extension ClientStreamManagementTests {
    @Test("a clean disconnect acknowledges what arrived, so nothing comes back from offline storage")
    func cleanDisconnectAcknowledges() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            try await alice.send("once", to: try JID("bob@localhost"))
            try await bobEvents.first("the message") { if case .message(let m) = $0, m.body == "once" { m } else { nil } }
            await bob.disconnect()
            let again = try XMPPClient(configuration: server.configuration("bob", resource: "b2"))
            let againEvents = EventRecorder(again)
            try await again.connect()
            // Offline messages come with the initial presence, before the
            // ping's answer.
            try await again.ping()
            #expect(!againEvents.all.contains { if case .message = $0 { true } else { false } })
            await again.disconnect()
            await alice.disconnect()
        }
    }
}

extension ClientStreamManagementTests {
    @Test("messages sent just before the connection is cut are stored once each, in order, after resumption")
    func unacknowledgedOutboundSurvivesACut() async throws {
        try await ServerFixture.run { server in
            let alice = try await server.registeredClient("alice")
            _ = try await server.registeredClient("bob")
            let aliceEvents = EventRecorder(alice)
            try await alice.connect()
            // Bob is offline: every message that reaches the server is kept
            // in his offline storage, where duplicates would show.
            let bobJID = try JID("bob@localhost")
            let texts = (1...20).map { "burst \($0)" }
            for text in texts { try await alice.send(text, to: bobJID) }
            await alice.cutConnection()
            try await aliceEvents.first("alice reconnected") { event -> Bool? in
                aliceEvents.all.filter { if case .connectionState(.connected) = $0 { true } else { false } }.count == 2
                    ? true : nil
            }
            try await alice.ping()
            let stored = try await server.server.storage.perform { try $0.offline.messages(for: "bob") }
            let bodies = stored.compactMap { $0.stanza.firstMatch(of: /<body>([^<]*)<\/body>/).map { String($0.1) } }
            #expect(bodies == texts)
            await alice.disconnect()
        }
    }
}
