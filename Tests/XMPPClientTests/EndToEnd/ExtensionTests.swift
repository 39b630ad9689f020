import Foundation
import Testing
@testable import XMPPClient
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// Carbons and profiles (vCard, avatar hash) through the client kit.
@Suite("Client extensions", .timeLimit(.clientSuite))
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

    @Test("a contact's own delay stamps do not backdate its message: it is stamped and archived on arrival")
    func contactsDelayStampIgnored() async throws {
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, _) = try await ClientIMTests.friends(on: server)
            let bobJID = try JID("bob@localhost")
            try await alice.send("first", to: bobJID)
            let sent = Date()
            var message = Message(type: .chat, to: try JID("alice@localhost"), id: "backdated", body: "second")
            for from in ["bob@localhost/b", nil] {
                var delay = Element("delay", namespace: NS.delay, attributes: ["stamp": "2001-01-01T00:00:00Z"])
                delay[attribute: "from"] = from
                message.element.append(delay)
            }
            await bob.send(message.element)
            let received = try await aliceEvents.first("the backdated message") {
                if case .message(let m) = $0, m.id == "backdated" { m } else { nil }
            }
            #expect(!received.isDelayed)
            #expect(received.timestamp >= sent.addingTimeInterval(-0.001))
            let archived = try await alice.conversation(with: bobJID)
            #expect(archived.map(\.body) == ["first", "second"])
            let archivedStamp = try #require(archived.last?.timestamp)
            #expect(abs(archivedStamp.timeIntervalSince(received.timestamp)) < 0.01)
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("a stamp our own account put on a message another of our resources sent is kept (carbons)")
    func ownDelayStampOnSentCarbonKept() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, _) = try await ClientIMTests.friends(on: server)
            let tablet = try XMPPClient(configuration: server.configuration("alice", resource: "tablet"))
            let tabletEvents = EventRecorder(tablet)
            try await tablet.connect()
            let stamp = "2001-01-01T00:00:00Z"
            var message = Message(type: .chat, to: try JID("bob@localhost"), id: "queued", body: "written offline")
            message.element.append(
                Element("delay", namespace: NS.delay, attributes: ["from": "alice@localhost/a", "stamp": stamp]))
            await alice.send(message.element)
            let copy = try await tabletEvents.first("the sent carbon") {
                if case .message(let m) = $0, m.id == "queued" { m } else { nil }
            }
            #expect(copy.sentByUs && copy.isDelayed)
            #expect(copy.timestamp == XMPPClient.parseStamp(stamp))
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

    @Test("avatars over PEP: published with the profile, metadata notifications become contacts' avatar hashes")
    func avatarThroughPEP() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let aliceJID = try JID("alice@localhost")
            let avatar = Profile.Avatar(data: Array(repeating: 0x42, count: 5000), type: "image/png")
            try await alice.setProfile(Profile(avatar: avatar))
            // XEP-0084 §4.1: the data item, under the image's SHA-1.
            let item = Element("item", namespace: NS.pubsub, attributes: ["id": avatar.hash])
            let items = Element("items", namespace: NS.pubsub, attributes: ["node": NS.avatarData], children: [.element(item)])
            let reply = try await bob.request(.get, to: aliceJID, payload: Element("pubsub", namespace: NS.pubsub, children: [.element(items)]))
            let data = reply.payload?.child("items", namespace: NS.pubsub)?.child("item", namespace: NS.pubsub)?
                .childText("data", namespace: NS.avatarData)
            #expect(try Base64.decode(try #require(data)) == avatar.data)
            // Metadata alone (no XEP-0153 hash in presence says "feed"):
            // bob's caps ask for it, and the hash reaches his presence events.
            let info = Element("info", namespace: NS.avatarMetadata, attributes: ["id": "feed", "bytes": "1", "type": "image/png"])
            let metadata = Element("metadata", namespace: NS.avatarMetadata, children: [.element(info)])
            let published = Element("item", namespace: NS.pubsub, attributes: ["id": "feed"], children: [.element(metadata)])
            let publish = Element("publish", namespace: NS.pubsub, attributes: ["node": NS.avatarMetadata], children: [.element(published)])
            _ = try await alice.request(.set, payload: Element("pubsub", namespace: NS.pubsub, children: [.element(publish)]))
            let presence = try await bobEvents.first("alice's presence with the PEP avatar hash") {
                if case .presence(let p) = $0, p.avatarHash == "feed" { p } else { nil }
            }
            #expect(presence.jid.bare == aliceJID)
            #expect(await bob.presences(of: aliceJID).map(\.avatarHash) == ["feed"])
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("the client's caps hash its own disco#info, which it answers for node#ver")
    func capabilitiesAnswerDiscoInfo() async throws {
        let caps = XMPPClient.capabilities
        #expect(caps.isVerified(by: XMPPClient.discoInfo))
        let features = XMPPClient.discoInfo.elements.compactMap { $0[attribute: "var"] }
        #expect(features.contains(NS.avatarMetadata + "+notify"))
        try await ServerFixture.run { server in
            let (alice, _, bob, _) = try await ClientIMTests.friends(on: server)
            let aliceFull = try #require(await alice.boundJID)
            for node in [nil, caps.discoNode] {
                var query = Element("query", namespace: NS.discoInfo)
                query[attribute: "node"] = node
                let reply = try await bob.request(.get, to: aliceFull, payload: query)
                let answer = try #require(reply.payload)
                #expect(answer[attribute: "node"] == node)
                #expect(caps.isVerified(by: answer))
            }
            var other = Element("query", namespace: NS.discoInfo)
            other[attribute: "node"] = "urn:example:other"
            await #expect(throws: XMPPClientError.self) { _ = try await bob.request(.get, to: aliceFull, payload: other) }
            await alice.disconnect()
            await bob.disconnect()
        }
    }
}

/// The server's message archive through the client kit.
@Suite("Client history", .timeLimit(.clientSuite))
struct ClientHistoryTests {
    @Test("a new device fills its local archive from the server, both directions, once")
    func syncOnNewDevice() async throws {
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let bobJID = try JID("bob@localhost")
            let aliceJID = try JID("alice@localhost")
            try await alice.send("one", to: bobJID)
            try await bobEvents.first("one") { if case .message(let m) = $0, m.body == "one" { m } else { nil } }
            try await bob.send("two", to: aliceJID)
            // Alice answers what she got: two clients' messages are in no
            // order until one has seen the other's.
            try await aliceEvents.first("two") { if case .message(let m) = $0, m.body == "two" { m } else { nil } }
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

/// Files shared through HTTP upload (XEP-0363) with the client kit.
@Suite("Client file sharing", .timeLimit(.clientSuite))
struct ClientFileSharingTests {
    @Test("a file is uploaded, announced with its URL (also out of band), and downloads byte for byte")
    func sendAndFetch() async throws {
        try await ServerFixture.run { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("photo-\(UUID()).jpg")
            try Data(bytes).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let id = try await alice.sendFile(file, to: try JID("bob@localhost"))
            let message = try await bobEvents.first("the file message") {
                if case .message(let m) = $0, m.id == id { m } else { nil }
            }
            let url = try #require(message.attachmentURL)
            #expect(message.body == url)
            #expect(url.hasSuffix(file.lastPathComponent))
            #expect(try await bob.download(url) == bytes)
            await #expect(throws: XMPPClientError.self) { try await bob.download(url + "-missing") }
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("over HTTPS, the pinned certificate is trusted for the account's server only, not for a contact's host")
    func pinnedCertificateOnlyForTheOwnServer() async throws {
        let secondHost = "127.0.0.2"
        try await ServerFixture.run(configure: {
            $0.http.tlsListen = [ListenAddress("127.0.0.1:0")!, ListenAddress("\(secondHost):0")!]
        }) { server in
            let (alice, _, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let bytes = Array("a picture".utf8)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("pin-\(UUID()).jpg")
            try Data(bytes).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let id = try await alice.sendFile(file, to: try JID("bob@localhost"))
            let message = try await bobEvents.first("the file message") {
                if case .message(let m) = $0, m.id == id { m } else { nil }
            }
            let url = try #require(message.attachmentURL)
            #expect(url.hasPrefix("https://localhost:"))
            #expect(try await bob.download(url) == bytes, "the account's domain: the pin holds")
            // The same server's certificate under a name that is not the
            // account's: only the system roots can vouch for it.
            let port = try #require(server.server.httpAddresses.last?.port)
            let path = url.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }
            do throws(XMPPClientError) {
                _ = try await bob.download("https://\(secondHost):\(port)\(path)")
                Issue.record("another host was trusted through the account's pinned certificate")
            } catch {
                if case .tls = error {} else { Issue.record("expected a TLS failure, got \(error)") }
            }
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("a file over the server's limit is refused before anything is uploaded")
    func tooLarge() async throws {
        try await ServerFixture.run(configure: { $0.upload.maxFileSize = 1000 }) { server in
            let alice = try await server.registeredClient("alice")
            try await alice.connect()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID()).bin")
            try Data(count: 5000).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let bob = try JID("bob@localhost")
            do throws(XMPPClientError) {
                try await alice.sendFile(file, to: bob)
                Issue.record("a file over the limit was accepted")
            } catch {
                guard case .stanzaError(.notAcceptable, _) = error else {
                    Issue.record("expected not-acceptable, got \(error)")
                    return
                }
            }
            await alice.disconnect()
        }
    }

    @Test("media types from file names")
    func mediaTypes() {
        #expect(XMPPClient.mediaType(ofFileNamed: "a.JPG") == "image/jpeg")
        #expect(XMPPClient.mediaType(ofFileNamed: "voice.m4a") == "audio/mp4")
        #expect(XMPPClient.mediaType(ofFileNamed: "archive") == "application/octet-stream")
    }

    @Test("HTTP URLs and responses are read strictly")
    func httpParsing() throws {
        let url = try #require(HTTPURL("https://upload.example.com:5281/upload/x/a%20b.jpg?v=1.2.3"))
        #expect(url.isSecure && url.host == "upload.example.com" && url.port == 5281)
        #expect(url.path == "/upload/x/a%20b.jpg?v=1.2.3")
        #expect(url.hostHeader == "upload.example.com:5281")
        #expect(HTTPURL("http://[::1]/f")?.host == "::1")
        #expect(HTTPURL("ftp://x/y") == nil)
        #expect(HTTPURL("http://user@host/") == nil)
        let response = HTTPTransfer.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef".utf8))
        #expect(response?.status == 200)
        #expect(response?.body == Array("abc".utf8))
        #expect(HTTPTransfer.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc".utf8)) == nil)
        #expect(HTTPTransfer.parse(Array("garbage\r\n\r\n".utf8)) == nil)
    }
}

/// Blocking (XEP-0191) and client state (XEP-0352) through the client kit.
@Suite("Client blocking and state", .timeLimit(.clientSuite))
struct ClientBlockingTests {
    @Test("a blocked contact's messages bounce; unblocking everyone lets them through again")
    func blockAndUnblock() async throws {
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, bobEvents) = try await ClientIMTests.friends(on: server)
            let bobJID = try JID("bob@localhost")
            try await alice.block(bobJID)
            #expect(try await alice.blocklist() == [bobJID])
            let id = try await bob.send("let me in", to: try JID("alice@localhost"))
            let bounce = try await bobEvents.first("the bounce") {
                if case .messageFailed(id, _, let error) = $0 { error } else { nil }
            }
            guard case .stanzaError(.serviceUnavailable, _) = bounce else {
                Issue.record("expected service-unavailable, got \(bounce)")
                return
            }
            try await alice.unblock(nil)
            #expect(try await alice.blocklist().isEmpty)
            try await bob.send("thanks", to: try JID("alice@localhost"))
            try await aliceEvents.first("bob's message") { if case .message(let m) = $0, m.body == "thanks" { m } else { nil } }
            #expect(!aliceEvents.all.contains { if case .message(let m) = $0 { m.body == "let me in" } else { false } })
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("while inactive, a contact's presence waits for the next message")
    func inactiveHoldsPresence() async throws {
        try await ServerFixture.run { server in
            let (alice, aliceEvents, bob, _) = try await ClientIMTests.friends(on: server)
            let aliceFull = try #require(await alice.boundJID)
            await alice.setActive(false)
            // Each ping's answer comes after the server handled what that
            // client sent before it.
            try await alice.ping()
            let before = aliceEvents.all.count
            await bob.setPresence(.away, status: "out")
            try await bob.ping()
            #expect(await server.holdsPresence(for: aliceFull))
            #expect(!aliceEvents.all[before...].contains { if case .presence = $0 { true } else { false } })
            try await bob.send("ping", to: try JID("alice@localhost"))
            try await aliceEvents.first("the message") { if case .message(let m) = $0, m.body == "ping" { m } else { nil } }
            let kinds = aliceEvents.all[before...].compactMap { event -> String? in
                switch event {
                case .presence(let p) where p.availability == .away: "presence"
                case .message: "message"
                default: nil
                }
            }
            #expect(kinds == ["presence", "message"])
            await alice.disconnect()
            await bob.disconnect()
        }
    }
}
