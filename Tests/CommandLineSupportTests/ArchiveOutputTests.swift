import Foundation
import Testing
import XMPPClient
import XMPPCore
@testable import CommandLineSupport

/// What `history`, `recent` and `roster list` print.
@Suite struct ArchiveOutputTests {
    let alice = try! JID("alice@example.com")
    let bob = try! JID("bob@example.com")
    let noon = Timestamp.parse("2026-05-01T12:00:00.007Z")!

    func message(_ body: String, outgoing: Bool, read: Bool = false) -> ArchivedMessage {
        ArchivedMessage(
            account: alice, contact: bob, body: body, timestamp: noon, isOutgoing: outgoing, id: "m1", isRead: read)
    }

    @Test func historyLinesNameTheSender() {
        #expect(message("hi", outgoing: true).line == "2026-05-01T12:00:00Z alice@example.com: hi")
        #expect(message("hello\nthere", outgoing: false).line == "2026-05-01T12:00:00Z bob@example.com: hello\n  there")
    }

    @Test func historyJSON() throws {
        let line = message("hi", outgoing: false).json.line
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
        #expect(object == [
            "timestamp": "2026-05-01T12:00:00.007Z", "from": "bob@example.com", "to": "alice@example.com", "body": "hi",
            "outgoing": false, "read": false, "id": "m1",
        ] as NSDictionary)
    }

    @Test func recentLinesAndJSON() throws {
        let summary = ConversationSummary(contact: bob, lastMessage: message("hi", outgoing: false), unreadCount: 2)
        #expect(summary.line == "bob@example.com  2 unread  2026-05-01T12:00:00Z bob@example.com: hi")
        let object = try #require(JSONSerialization.jsonObject(with: Data(summary.json.line.utf8)) as? NSDictionary)
        #expect(object["contact"] as? String == "bob@example.com")
        #expect(object["unread"] as? Int == 2)
        #expect((object["lastMessage"] as? NSDictionary)?["body"] as? String == "hi")
    }

    @Test func rosterLines() {
        #expect(RosterContact(jid: bob).line == "bob@example.com  none")
        #expect(RosterContact(jid: bob, isPendingOut: true).line == "bob@example.com  none, pending")
        #expect(
            RosterContact(jid: bob, name: "Bob \"B\"", groups: ["Friends", "Work"], subscription: .to).line
                == "bob@example.com  to  \"Bob \"B\"\"  [Friends, Work]")
    }
}
