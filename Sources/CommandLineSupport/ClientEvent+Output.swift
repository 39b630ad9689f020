import XMPPClient
import XMPPCore

/// The kinds of event `listen` prints: the first word of each line, the
/// `type` of each JSON object, and what `--only` selects.
public enum EventKind: String, Sendable, CaseIterable {
    case connection, message
    case messageFailed = "message-failed"
    case presence, roster
    case subscriptionRequest = "subscription-request"
    case subscriptionAnswer = "subscription-answer"
    case roomMessage = "room-message"
    case roomPresence = "room-presence"
    case roomSubject = "room-subject"
    case roomInvitation = "room-invitation"
}

extension ClientEvent {
    /// What kind of event this is.
    public var kind: EventKind {
        switch self {
        case .connectionState: .connection
        case .message: .message
        case .messageFailed: .messageFailed
        case .presence: .presence
        case .roster: .roster
        case .subscriptionRequest: .subscriptionRequest
        case .subscriptionAnswer: .subscriptionAnswer
        case .room(let event): event.kind
        }
    }

    /// The event on one line for people, starting with its kind:
    ///
    /// ```
    /// connection connected alice@example.com/laptop
    /// message 2026-05-01T12:00:00Z bob@example.com/phone: hi
    /// message 2026-05-01T11:58:02Z bob@example.com/phone (delayed): are you there?
    /// message 2026-05-01T12:01:00Z alice@example.com/tablet to bob@example.com: sent from the tablet
    /// message 2026-05-01T12:02:00Z bob@example.com/phone: photo [attachment https://…/a.jpg]
    /// message-failed carol@example.com: the server refused: service-unavailable
    /// presence bob@example.com/phone away priority 5: lunch
    /// roster updated bob@example.com  both  "Bob"  [Friends]
    /// subscription-request carol@example.com: hi, it's Carol
    /// subscription-answer bob@example.com approved
    /// room-message 2026-05-01T12:03:00Z lounge@conference.example.com/bob: hello all
    /// room-presence lounge@conference.example.com/carol joined participant none
    /// ```
    ///
    /// Text from the network goes through `TerminalText.printable`.
    public var line: String {
        "\(kind.rawValue) " + details
    }

    private var details: String {
        switch self {
        case .connectionState(let state):
            return Self.details(of: state)
        case .message(let message):
            let delayed = message.isDelayed ? " (delayed)" : ""
            let sender = message.sentByUs ? "\(message.from) to \(message.to?.description ?? "?")" : "\(message.from)"
            let attachment = message.attachmentURL.map { " [attachment " + TerminalText.printable($0) + "]" } ?? ""
            return "\(Timestamp.seconds(message.timestamp)) \(sender)\(delayed): "
                + TerminalText.printable(message.body) + attachment
        case .messageFailed(_, let from, let error):
            return "\(from): \(TerminalText.printable(error.description))"
        case .presence(let presence):
            let priority = presence.priority == 0 ? "" : " priority \(presence.priority)"
            return "\(presence.jid) \(presence.availability.rawValue)\(priority)" + Self.suffix(presence.status)
        case .roster(.loaded(let contacts)):
            return "loaded \(contacts.count) contact" + (contacts.count == 1 ? "" : "s")
        case .roster(.updated(let contact)):
            return "updated \(contact.line)"
        case .roster(.removed(let jid)):
            return "removed \(jid)"
        case .subscriptionRequest(let from, let status):
            return from.description + Self.suffix(status)
        case .subscriptionAnswer(let from, let approved):
            return "\(from) \(approved ? "approved" : "denied")"
        case .room(let event):
            return event.details
        }
    }

    private static func details(of state: ConnectionState) -> String {
        switch state {
        case .connecting:
            "connecting"
        case .connected(let jid):
            "connected \(jid)"
        case .reconnecting(let attempt, let delay, let error):
            "reconnecting attempt \(attempt) in \(delay.secondsText) s" + suffix(error?.description)
        case .disconnected(let error):
            "disconnected" + suffix(error?.description)
        }
    }

    /// `": text"`, or nothing without text.
    static func suffix(_ text: String?) -> String {
        text.map { ": " + TerminalText.printable($0) } ?? ""
    }

    /// The event as a JSON object for scripts; `type` is its kind, times
    /// are ISO 8601 with milliseconds:
    ///
    /// ```
    /// {"state":"connected","jid":"alice@example.com/laptop","type":"connection"}
    /// {"body":"hi","delayed":false,"from":"bob@example.com/phone","id":"…",
    ///  "messageType":"chat","timestamp":"2026-05-01T12:00:00.123Z","type":"message"}
    /// ```
    public var json: JSONValue {
        var object: [String: JSONValue?]
        switch self {
        case .connectionState(let state):
            object = Self.fields(of: state)
        case .message(let message):
            object = [
                "id": .string(message.id), "from": .string(message.from.description), "body": .string(message.body),
                "timestamp": .string(Timestamp.milliseconds(message.timestamp)), "delayed": .bool(message.isDelayed),
                "messageType": .string(message.type.rawValue), "to": message.to.map { .string($0.description) },
                "sentByUs": .bool(message.sentByUs), "attachment": message.attachmentURL.map(JSONValue.string),
            ]
        case .messageFailed(let id, let from, let error):
            object = ["id": id.map(JSONValue.string), "from": .string(from.description), "error": .string(error.description)]
        case .presence(let presence):
            object = [
                "from": .string(presence.jid.description), "availability": .string(presence.availability.rawValue),
                "status": presence.status.map(JSONValue.string), "priority": .integer(Int(presence.priority)),
            ]
        case .roster(.loaded(let contacts)):
            object = ["change": .string("loaded"), "contacts": .array(contacts.map(\.json))]
        case .roster(.updated(let contact)):
            object = ["change": .string("updated"), "contact": contact.json]
        case .roster(.removed(let jid)):
            object = ["change": .string("removed"), "jid": .string(jid.description)]
        case .subscriptionRequest(let from, let status):
            object = ["from": .string(from.description), "status": status.map(JSONValue.string)]
        case .subscriptionAnswer(let from, let approved):
            object = ["from": .string(from.description), "approved": .bool(approved)]
        case .room(let event):
            object = event.fields
        }
        object["type"] = .string(kind.rawValue)
        return .fields(object)
    }

    private static func fields(of state: ConnectionState) -> [String: JSONValue?] {
        switch state {
        case .connecting:
            ["state": .string("connecting")]
        case .connected(let jid):
            ["state": .string("connected"), "jid": .string(jid.description)]
        case .reconnecting(let attempt, let delay, let error):
            [
                "state": .string("reconnecting"), "attempt": .integer(attempt),
                "delay": .number(delay.totalSeconds),
                "error": error.map { .string($0.description) },
            ]
        case .disconnected(let error):
            ["state": .string("disconnected"), "error": error.map { .string($0.description) }]
        }
    }
}
