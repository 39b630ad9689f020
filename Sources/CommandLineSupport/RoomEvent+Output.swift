import XMPPClient
import XMPPCore

/// How `listen` and `room join` print what happens in rooms; see
/// `ClientEvent.line` and `ClientEvent.json`.
extension RoomEvent {
    /// The kind this event is printed as.
    var kind: EventKind {
        switch self {
        case .message: .roomMessage
        case .subject: .roomSubject
        case .invitation: .roomInvitation
        case .joined, .joinFailed, .left, .occupantJoined, .occupantChanged, .occupantLeft, .nickChanged: .roomPresence
        }
    }

    /// The line after the kind:
    ///
    /// ```
    /// 2026-05-01T12:00:00Z lounge@conference.example.com/bob: hi
    /// 2026-05-01T12:00:00Z lounge@conference.example.com/bob (private): psst
    /// lounge@conference.example.com joined as alice (created)
    /// lounge@conference.example.com/bob changed moderator owner away: lunch
    /// lounge@conference.example.com/bob kicked: spam
    /// lounge@conference.example.com/bob now bobby
    /// lounge@conference.example.com by bob: Friday plans
    /// lounge@conference.example.com from carol@example.com (direct): come in
    /// ```
    var details: String {
        switch self {
        case .message(let message):
            let sender = message.room.description + (message.nick.map { "/" + TerminalText.printable($0) } ?? "")
            let notes = (message.isPrivate ? " (private)" : "") + (message.isDelayed ? " (delayed)" : "")
            return "\(Timestamp.seconds(message.timestamp)) \(sender)\(notes): " + TerminalText.printable(message.body)
        case .joined(let room, let nick, let created):
            return "\(room) joined as \(TerminalText.printable(nick))" + (created ? " (created)" : "")
        case .joinFailed(let room, let error):
            return "\(room) join failed" + ClientEvent.suffix(error.description)
        case .left(let room, let reason):
            return "\(room) \(reason.word)" + ClientEvent.suffix(reason.text)
        case .occupantJoined(let occupant):
            return "\(occupant.address) joined \(occupant.summary)"
        case .occupantChanged(let occupant):
            return "\(occupant.address) changed \(occupant.summary)"
        case .occupantLeft(let occupant, let reason):
            return "\(occupant.address) \(reason.word)" + ClientEvent.suffix(reason.text)
        case .nickChanged(let room, let from, let to, _):
            return "\(room)/\(TerminalText.printable(from)) now \(TerminalText.printable(to))"
        case .subject(let room, let subject, let nick):
            return room.description + (nick.map { " by " + TerminalText.printable($0) } ?? "")
                + ClientEvent.suffix(subject)
        case .invitation(let invitation):
            return invitation.room.description + (invitation.inviter.map { " from \($0)" } ?? "")
                + (invitation.isDirect ? " (direct)" : "") + ClientEvent.suffix(invitation.reason)
        }
    }

    /// The JSON fields besides `type`; `event` names what happened.
    var fields: [String: JSONValue?] {
        switch self {
        case .message(let message):
            return [
                "id": .string(message.id), "room": .string(message.room.description),
                "nick": message.nick.map(JSONValue.string), "body": .string(message.body),
                "timestamp": .string(Timestamp.milliseconds(message.timestamp)), "delayed": .bool(message.isDelayed),
                "private": .bool(message.isPrivate), "own": .bool(message.isOwn),
            ]
        case .joined(let room, let nick, let created):
            return [
                "event": .string("joined"), "room": .string(room.description), "nick": .string(nick),
                "created": .bool(created),
            ]
        case .joinFailed(let room, let error):
            return ["event": .string("join-failed"), "room": .string(room.description), "error": .string(error.description)]
        case .left(let room, let reason):
            return ["event": .string(reason.word), "room": .string(room.description), "reason": reason.text.map(JSONValue.string)]
        case .occupantJoined(let occupant):
            return occupant.fields(event: "joined")
        case .occupantChanged(let occupant):
            return occupant.fields(event: "changed")
        case .occupantLeft(let occupant, let reason):
            var fields = occupant.fields(event: reason.word)
            fields["reason"] = reason.text.map(JSONValue.string)
            return fields
        case .nickChanged(let room, let from, let to, let isSelf):
            return [
                "event": .string("nick-changed"), "room": .string(room.description), "nick": .string(from),
                "newNick": .string(to), "self": .bool(isSelf),
            ]
        case .subject(let room, let subject, let nick):
            return ["room": .string(room.description), "subject": .string(subject), "nick": nick.map(JSONValue.string)]
        case .invitation(let invitation):
            return [
                "room": .string(invitation.room.description), "from": invitation.inviter.map { .string($0.description) },
                "reason": invitation.reason.map(JSONValue.string), "password": invitation.password.map(JSONValue.string),
                "direct": .bool(invitation.isDirect),
            ]
        }
    }
}

extension RoomOccupant {
    /// Role, affiliation, availability unless plain available, real JID
    /// when shown, then the status text.
    var summary: String {
        let availability = availability == .available ? "" : " \(availability.rawValue)"
        return "\(role.rawValue) \(affiliation.rawValue)\(availability)" + (jid.map { " \($0)" } ?? "")
            + ClientEvent.suffix(status)
    }

    /// One line for `room occupants`: nickname, role, affiliation, real JID.
    public var line: String {
        "\(TerminalText.printable(nick))  \(role.rawValue)  \(affiliation.rawValue)" + (jid.map { "  \($0)" } ?? "")
    }

    /// The occupant as a JSON object for `room occupants`.
    public var json: JSONValue { .fields(fields(event: nil)) }

    /// The occupant as JSON fields, with `event` when given.
    func fields(event: String?) -> [String: JSONValue?] {
        [
            "event": event.map(JSONValue.string), "room": .string(room.description), "nick": .string(nick),
            "role": .string(role.rawValue), "affiliation": .string(affiliation.rawValue),
            "jid": jid.map { .string($0.description) }, "availability": .string(availability.rawValue),
            "status": status.map(JSONValue.string),
        ]
    }
}

extension RoomExitReason {
    /// One word for the line and JSON `event`: left, kicked, banned,
    /// removed (affiliation or members-only), shutdown, destroyed.
    var word: String {
        switch self {
        case .left: "left"
        case .kicked: "kicked"
        case .banned: "banned"
        case .affiliationChanged, .membersOnly: "removed"
        case .shutdown: "shutdown"
        case .destroyed: "destroyed"
        }
    }

    /// The reason given, or for a destroyed room where to go instead.
    var text: String? {
        switch self {
        case .kicked(let reason), .banned(let reason): reason
        case .destroyed(let reason, let alternate): [reason, alternate.map { "go to \($0)" }].compactMap { $0 }.first
        case .affiliationChanged: "affiliation changed"
        case .membersOnly: "the room is now members-only"
        case .left, .shutdown: nil
        }
    }
}

extension RoomBookmark {
    /// One line for `room list`: room, `autojoin` when set, nick, "name".
    public var line: String {
        room.description + (autojoin ? "  autojoin" : "") + (nick.map { "  nick " + TerminalText.printable($0) } ?? "")
            + (name.map { "  \"" + TerminalText.printable($0) + "\"" } ?? "")
    }

    /// The bookmark as a JSON object (the password left out).
    public var json: JSONValue {
        .fields([
            "room": .string(room.description), "autojoin": .bool(autojoin), "nick": nick.map(JSONValue.string),
            "name": name.map(JSONValue.string),
        ])
    }
}
