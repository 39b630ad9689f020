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
