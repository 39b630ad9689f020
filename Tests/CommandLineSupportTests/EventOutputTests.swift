import Foundation
import Testing
import XMPPCore
@testable import CommandLineSupport
@testable import XMPPClient

/// What `listen` prints for each event, for people and as JSON.
@Suite struct EventOutputTests {
    let bob = try! JID("bob@example.com/phone")
    let noon = Timestamp.parse("2026-05-01T12:00:00.250Z")!

    func message(_ body: String, delayed: Bool = false) -> ClientEvent {
        .message(ReceivedMessage(id: "m1", from: bob, type: .chat, body: body, timestamp: noon, isDelayed: delayed))
    }

    /// The JSON line decoded back, to compare as values.
    func decoded(_ event: ClientEvent) throws -> NSDictionary {
        let line = event.json.line
        #expect(!line.contains("\n"))
        return try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
    }

    @Test func lines() throws {
        let contact = RosterContact(jid: try JID("bob@example.com"), name: "Bob", groups: ["Friends"], subscription: .both)
        let cases: [(ClientEvent, String)] = [
            (.connectionState(.connecting), "connection connecting"),
            (.connectionState(.connected(try JID("alice@example.com/cli"))), "connection connected alice@example.com/cli"),
            (.connectionState(.reconnecting(attempt: 2, delay: .milliseconds(1500), lastError: .timedOut)),
             "connection reconnecting attempt 2 in 1.5 s: the server did not answer in time"),
            (.connectionState(.reconnecting(attempt: 1, delay: .seconds(2), lastError: nil)),
             "connection reconnecting attempt 1 in 2 s"),
            (.connectionState(.disconnected(nil)), "connection disconnected"),
            (.connectionState(.disconnected(.notAuthorized)),
             "connection disconnected: not authorized: wrong username or password"),
            (message("hi"), "message 2026-05-01T12:00:00Z bob@example.com/phone: hi"),
            (message("are you there?", delayed: true),
             "message 2026-05-01T12:00:00Z bob@example.com/phone (delayed): are you there?"),
            (.messageFailed(id: "m2", from: try JID("carol@example.com"), error: .stanzaError(.serviceUnavailable, text: nil)),
             "message-failed carol@example.com: the server refused: service-unavailable"),
            (.presence(ContactPresence(jid: bob, availability: .away, status: "lunch", priority: 5)),
             "presence bob@example.com/phone away priority 5: lunch"),
            (.presence(ContactPresence(jid: bob, availability: .unavailable)), "presence bob@example.com/phone unavailable"),
            (.roster(.loaded([contact])), "roster loaded 1 contact"),
            (.roster(.loaded([])), "roster loaded 0 contacts"),
            (.roster(.updated(contact)), "roster updated bob@example.com  both  \"Bob\"  [Friends]"),
            (.roster(.removed(try JID("bob@example.com"))), "roster removed bob@example.com"),
            (.subscriptionRequest(from: try JID("carol@example.com"), status: "it's Carol"),
             "subscription-request carol@example.com: it's Carol"),
            (.subscriptionRequest(from: try JID("carol@example.com"), status: nil), "subscription-request carol@example.com"),
            (.subscriptionAnswer(from: try JID("carol@example.com"), approved: true), "subscription-answer carol@example.com approved"),
            (.subscriptionAnswer(from: try JID("carol@example.com"), approved: false), "subscription-answer carol@example.com denied"),
        ]
        for (event, line) in cases {
            #expect(event.line == line)
            #expect(event.line.hasPrefix(event.kind.rawValue + " "))
        }
    }

    @Test func aMultilineOrHostileBodyStaysReadableAndHarmless() {
        #expect(message("one\ntwo").line == "message 2026-05-01T12:00:00Z bob@example.com/phone: one\n  two")
        #expect(message("a\u{9B}31mb\rc\td").line.hasSuffix(": a\u{FFFD}31mb\u{FFFD}c\td"))
    }

    @Test func messageJSON() throws {
        let object = try decoded(message("one\ntwo", delayed: true))
        #expect(object == [
            "type": "message", "id": "m1", "from": "bob@example.com/phone", "body": "one\ntwo",
            "timestamp": "2026-05-01T12:00:00.250Z", "delayed": true, "messageType": "chat", "sentByUs": false,
        ] as NSDictionary)
    }

    @Test func carbonAndAttachment() throws {
        let copy = ClientEvent.message(
            ReceivedMessage(
                id: "m2", from: try JID("alice@example.com/tablet"), to: try JID("bob@example.com"), type: .chat,
                body: "photo", timestamp: noon, isDelayed: false, sentByUs: true,
                attachmentURL: "https://upload.example.com/a.jpg"))
        #expect(
            copy.line
                == "message 2026-05-01T12:00:00Z alice@example.com/tablet to bob@example.com: photo "
                + "[attachment https://upload.example.com/a.jpg]")
        let object = try decoded(copy)
        #expect(object["sentByUs"] as? Bool == true)
        #expect(object["to"] as? String == "bob@example.com")
        #expect(object["attachment"] as? String == "https://upload.example.com/a.jpg")
    }

    @Test func otherJSON() throws {
        #expect(try decoded(.connectionState(.connected(try JID("alice@example.com/cli")))) == [
            "type": "connection", "state": "connected", "jid": "alice@example.com/cli",
        ] as NSDictionary)
        #expect(try decoded(.connectionState(.reconnecting(attempt: 3, delay: .milliseconds(500), lastError: .timedOut))) == [
            "type": "connection", "state": "reconnecting", "attempt": 3, "delay": 0.5,
            "error": "the server did not answer in time",
        ] as NSDictionary)
        #expect(try decoded(.presence(ContactPresence(jid: bob, availability: .dnd))) == [
            "type": "presence", "from": "bob@example.com/phone", "availability": "dnd", "priority": 0,
        ] as NSDictionary)
        #expect(try decoded(.roster(.updated(RosterContact(jid: try JID("bob@example.com"), isPendingOut: true)))) == [
            "type": "roster", "change": "updated",
            "contact": ["jid": "bob@example.com", "subscription": "none", "pending": true, "groups": [String]()],
        ] as NSDictionary)
        #expect(try decoded(.subscriptionAnswer(from: try JID("carol@example.com"), approved: false)) == [
            "type": "subscription-answer", "from": "carol@example.com", "approved": false,
        ] as NSDictionary)
        #expect(try decoded(.messageFailed(id: nil, from: try JID("carol@example.com"), error: .timedOut)) == [
            "type": "message-failed", "from": "carol@example.com", "error": "the server did not answer in time",
        ] as NSDictionary)
    }

    @Test func keysAreSortedSoLinesAreStable() {
        #expect(ClientEvent.subscriptionRequest(from: try! JID("c@example.com"), status: "hi").json.line
            == #"{"from":"c@example.com","status":"hi","type":"subscription-request"}"#)
    }

    @Test func listenOptionsSelectKindsAndFormat() throws {
        guard case .run(let invocation) = try CommandLineParser.parse(["listen", "--only", "message, presence", "--json", "--count", "2"]) else {
            Issue.record("listen did not parse")
            return
        }
        let options = try ListenOptions(invocation)
        #expect(options.kinds == [.message, .presence])
        #expect(options.count == 2)
        #expect(options.output(for: message("hi")) == message("hi").json.line)
        #expect(options.output(for: .connectionState(.connecting)) == nil)
        #expect(ListenOptions().output(for: .connectionState(.connecting)) == "connection connecting")
    }
}
