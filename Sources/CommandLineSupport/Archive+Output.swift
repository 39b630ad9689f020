import XMPPClient
import XMPPCore

extension ArchivedMessage {
    /// The sender's bare JID: the account for an outgoing message.
    public var sender: JID { isOutgoing ? account : contact }

    /// One line for `history`: `2026-05-01T12:00:00Z bob@example.com: hi`.
    public var line: String {
        "\(Timestamp.seconds(timestamp)) \(sender): \(TerminalText.printable(body))"
    }

    /// The message as a JSON object: `timestamp` (with milliseconds),
    /// `from`, `to`, `body`, `outgoing`, `read`, `id`.
    public var json: JSONValue {
        .object([
            "timestamp": .string(Timestamp.milliseconds(timestamp)), "from": .string(sender.description),
            "to": .string((isOutgoing ? contact : account).description), "body": .string(body),
            "outgoing": .bool(isOutgoing), "read": .bool(isRead), "id": .string(id),
        ])
    }
}

extension ConversationSummary {
    /// One line for `recent`:
    /// `bob@example.com  2 unread  2026-05-01T12:00:00Z bob@example.com: hi`.
    public var line: String {
        "\(contact)  \(unreadCount) unread  \(lastMessage.line)"
    }

    /// The conversation as a JSON object: `contact`, `unread` and
    /// `lastMessage` as `ArchivedMessage.json`.
    public var json: JSONValue {
        .object(["contact": .string(contact.description), "unread": .integer(unreadCount), "lastMessage": lastMessage.json])
    }
}
