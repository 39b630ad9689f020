import Foundation
import Testing
@testable import XMPPClient
import XMPPCore
import XMPPTestSupport

/// Carbons and profiles (vCard, avatar hash) through the client kit.
@Suite("Client extensions")
struct ClientExtensionTests {
    @Test("a message sent from one resource shows up, archived as ours, on the other (carbons)")
    func sentCarbon() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let tablet = try XMPPClient(configuration: server.configuration("alice", resource: "tablet"))
            let tabletEvents = EventRecorder(tablet)
            try await tablet.connect()
            let bobJID = try JID("bob@localhost")
            let id = try await alice.send("from the phone", to: bobJID)
            let copy = try await tabletEvents.first("the sent carbon") {
                if case .message(let m) = $0, m.sentByUs { m } else { nil }
            }
            #expect(copy.id == id)
            #expect(copy.to?.bare == bobJID)
            #expect(copy.from.resourcepart == "a")
            try await bobEvents.first("bob's copy") { if case .message(let m) = $0, m.id == id { m } else { nil } }
            let archived = try await tablet.conversation(with: bobJID)
            #expect(archived.map(\.isOutgoing) == [true])
            #expect(archived.map(\.body) == ["from the phone"])
            await tablet.disconnect()
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("a carbon from someone other than our own account is ignored")
    func forgedCarbonIgnored() async throws {
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, _) = try await ClientIMTests.friends(on: server)
            // Bob wraps a made-up message as a "carbon"; the server stamps
            // the wrapper with bob's JID, so alice must not believe it.
            var inner = Message(type: .chat, to: try JID("alice@localhost"), id: "forged", body: "fake")
            inner.element[attribute: "from"] = "carol@localhost/x"
            let forwarded = Element(
                "forwarded", namespace: NS.forward, children: [.element(inner.element)])
            var wrapper = Message(type: .chat, to: try JID("alice@localhost/a"), id: "wrapper")
            wrapper.element.append(Element("received", namespace: NS.carbons, children: [.element(forwarded)]))
            #expect(await bob.transmit(wrapper.element))
            try await bob.send("real", to: try JID("alice@localhost"))
            try await aliceEvents.first("bob's real message") { if case .message(let m) = $0, m.body == "real" { m } else { nil } }
            #expect(!aliceEvents.all.contains { if case .message(let m) = $0 { m.body == "fake" } else { false } })
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("profiles: set with an avatar, read by a contact, hash announced in presence")
    func profileAndAvatar() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let picture = (0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let profile = Profile(
                fullName: "Alice Liddell", nickname: "alice", email: "alice@example.com",
                avatar: .init(data: picture, type: "image/png"))
            try await alice.setProfile(profile)
            let hash = try #require(profile.avatar?.hash)
            #expect(hash.count == 40)
            try await bobEvents.first("alice's presence with the avatar hash") {
                if case .presence(let p) = $0, p.avatarHash == hash { p } else { nil }
            }
            let read = try await bob.profile(of: try JID("alice@localhost"))
            #expect(read == profile)
            #expect(try await alice.profile() == profile)
            #expect(try await bob.profile() == Profile())
            await alice.disconnect()
            await bob.disconnect()
        }
    }
}

/// The server's message archive through the client kit.
@Suite("Client history")
struct ClientHistoryTests {
    @Test("a new device fills its local archive from the server, both directions, once")
    func syncOnNewDevice() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let bobJID = try JID("bob@localhost")
            let aliceJID = try JID("alice@localhost")
            try await alice.send("one", to: bobJID)
            try await bobEvents.first("one") { if case .message(let m) = $0, m.body == "one" { m } else { nil } }
            try await bob.send("two", to: aliceJID)
            try await alice.send("three", to: bobJID)
            try await bobEvents.first("three") { if case .message(let m) = $0, m.body == "three" { m } else { nil } }
            // Live messages carry the archive id the server gave them.
            #expect(try await bob.conversation(with: aliceJID).allSatisfy { $0.isOutgoing || $0.serverID != nil })

            let laptop = try XMPPClient(configuration: server.configuration("alice", resource: "laptop"))
            try await laptop.connect()
            let synced = try await laptop.conversation(with: bobJID)
            #expect(synced.map(\.body) == ["one", "two", "three"])
            #expect(synced.map(\.isOutgoing) == [true, false, true])
            #expect(try await laptop.syncHistory() == 0)
            await laptop.disconnect()
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("server history pages backwards by archive id")
    func serverHistoryPaging() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let bobJID = try JID("bob@localhost")
            for index in 1...5 { try await alice.send("m\(index)", to: bobJID) }
            try await bobEvents.first("m5") { if case .message(let m) = $0, m.body == "m5" { m } else { nil } }
            let newest = try await alice.serverHistory(with: bobJID, limit: 2)
            #expect(newest.map(\.body) == ["m4", "m5"])
            let older = try await alice.serverHistory(with: bobJID, before: newest.first?.serverID, limit: 2)
            #expect(older.map(\.body) == ["m2", "m3"])
            await alice.disconnect()
            await bob.disconnect()
        }
    }
}
