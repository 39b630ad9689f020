import XMPPClient
import XMPPCore

extension ArchivedMessage {
    /// The sender's bare JID: the account for an outgoing message.
    public var sender: JID { isOutgoing ? account : contact }

    /// One line for `history`: `2026-05-01T12:00:00Z bob@example.com: hi`;
    /// for a message in a room, the room and the sender's nickname:
    /// `2026-05-01T12:00:00Z lounge@conference.example.com/bob: hi`.
    public var line: String {
        let from = nick.map { "\(contact)/" + TerminalText.printable($0) } ?? sender.description
        return "\(Timestamp.seconds(timestamp)) \(from): \(TerminalText.printable(body))"
    }

    /// The message as a JSON object: `timestamp` (with milliseconds),
    /// `from`, `to`, `body`, `outgoing`, `read`, `id`, and `nick` for a
    /// message in a room (which is then `to`, or `from` when outgoing).
    public var json: JSONValue {
        .fields([
            "timestamp": .string(Timestamp.milliseconds(timestamp)), "from": .string(sender.description),
            "to": .string((isOutgoing ? contact : account).description), "body": .string(body),
            "outgoing": .bool(isOutgoing), "read": .bool(isRead), "id": .string(id), "nick": nick.map(JSONValue.string),
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
