import CommandLineSupport
import Foundation
import XMPPClient
import XMPPCore

/// `room list|create|join|leave|send|occupants|invite|subject|kick|ban`
/// (`room history` is with the archive's commands). Those that act in a
/// room join it unseen by contacts, do their part, and leave.
enum RoomCommands {
    /// `room list [--service JID] [--json]`: the bookmarks, or the rooms a
    /// service lists.
    static func list(_ context: Context) async throws {
        let invocation = context.invocation
        let json = invocation.flag("--json")
        let client = try context.savedClient()
        if let service = invocation.value("--service") {
            let serviceJID = try jid(service)
            let (rooms, _) = try await context.withConnection(client) { try await $0.publicRooms(on: serviceJID) }
            for (room, name) in rooms {
                Console.print(
                    json
                        ? JSONValue.object(["room": .string(room.description), "name": name.map(JSONValue.string) ?? .null]).line
                        : room.description + (name.map { "  \"" + TerminalText.printable($0) + "\"" } ?? ""))
            }
            return
        }
        let (bookmarks, _) = try await context.withConnection(client) { try await $0.bookmarks() }
        for bookmark in bookmarks.sorted(by: { $0.room < $1.room }) {
            Console.print(json ? bookmark.json.line : bookmark.line)
        }
    }

    /// `room create ROOM [--nick NICK] [--name NAME] [--persistent]
    /// [--members-only] [--password PASSWORD] [--autojoin]`.
    static func create(_ context: Context) async throws {
        let invocation = context.invocation
        let room = try invocation.jid(at: 0).bare
        let settings = RoomSettings(
            name: invocation.value("--name"), isPersistent: invocation.flag("--persistent") ? true : nil,
            isMembersOnly: invocation.flag("--members-only") ? true : nil, password: invocation.value("--password"))
        let client = try context.savedClient()
        _ = try await context.withConnection(client) { client in
            let nick = try await nick(for: room, context, client)
            try await client.createRoom(room, nick: nick, settings: settings)
            try await bookmarkIfAsked(room, nick: nick, context, client)
            try await client.leaveRoom(room)
        }
        Console.print("created \(room)")
    }

    /// `room join ROOM [--nick NICK] [--password PASSWORD] [--autojoin]
    /// [--json]`: in the room until stopped, as `chat` is with a contact.
    static func join(_ context: Context) async throws {
        let invocation = context.invocation
        let room = try invocation.jid(at: 0).bare
        let options = try ListenOptions(invocation)
        let deadline = context.global.timeout.map { ContinuousClock.now + $0 }
        let client = try context.savedClient()
        let events = client.events()
        try await context.connect(client, presence: Context.ShownPresence(availability: .available))
        let nick = try await nick(for: room, context, client)
        if await client.nick(in: room) == nil,
            try await client.joinRoom(room, nick: nick, password: invocation.value("--password"))
        {
            // A room this join created opens with the defaults.
            try await client.acceptDefaultConfiguration(of: room)
        }
        try await bookmarkIfAsked(room, nick: nick, context, client)
        Console.progress("in \(room) as \(nick); end with /quit or end of input")
        try await Conversation.run(client, events: events, deadline: deadline) { event in
            if let line = options.output(for: event) { Console.print(line) }
        } send: { line in
            try await client.sendRoomMessage(line, to: room)
        }
    }

    /// `room leave ROOM`: no more autojoin.
    static func leave(_ context: Context) async throws {
        let room = try context.invocation.jid(at: 0).bare
        let client = try context.savedClient()
        _ = try await context.withConnection(client) { try await $0.removeBookmark(room) }
        Console.print("removed the bookmark of \(room)")
    }

    /// `room send ROOM TEXT...`: fails when the room refuses it.
    static func send(_ context: Context) async throws {
        let text = MessageCommands.messageText(of: context.invocation)
        guard !text.isEmpty else { throw CommandFailure(.badData, "there is no text to send") }
        let (id, events) = try await inRoom(context) { client, room in try await client.sendRoomMessage(text, to: room) }
        try failIfBounced(id, events)
        Console.progress("sent to \(try context.invocation.jid(at: 0).bare)")
    }

    /// `room occupants ROOM [--json]`.
    static func occupants(_ context: Context) async throws {
        let (occupants, _) = try await inRoom(context) { client, room in await client.occupants(of: room) }
        let json = context.invocation.flag("--json")
        for occupant in occupants { Console.print(json ? occupant.json.line : occupant.line) }
    }

    /// `room invite ROOM JID [--reason TEXT] [--direct]`.
    static func invite(_ context: Context) async throws {
        let invocation = context.invocation
        let invitee = try invocation.jid(at: 1)
        let reason = invocation.value("--reason")
        if invocation.flag("--direct") {
            let room = try invocation.jid(at: 0).bare
            let client = try context.savedClient()
            _ = try await context.withConnection(client) { try await $0.inviteDirectly(invitee, to: room, reason: reason) }
        } else {
            let (_, events) = try await inRoom(context) { client, room in
                try await client.invite(invitee, to: room, reason: reason)
            }
            for case .messageFailed(_, let from, let error) in events { throw CommandFailure(error).prefixed("\(from)") }
        }
        Console.print("invited \(invitee)")
    }

    /// `room subject ROOM TEXT...`; `-` clears it.
    static func subject(_ context: Context) async throws {
        let words = context.invocation.operands.dropFirst().joined(separator: " ")
        let subject = words == "-" ? "" : words
        let (_, events) = try await inRoom(context) { client, room in try await client.setSubject(subject, of: room) }
        for case .messageFailed(_, let from, let error) in events { throw CommandFailure(error).prefixed("\(from)") }
    }

    /// `room kick ROOM NICK [--reason TEXT]`.
    static func kick(_ context: Context) async throws {
        let target = context.invocation.operands[1]
        _ = try await inRoom(context) { client, room in
            try await client.kick(target, from: room, reason: context.invocation.value("--reason"))
        }
        Console.print("kicked \(target)")
    }

    /// `room ban ROOM JID [--reason TEXT]`.
    static func ban(_ context: Context) async throws {
        let target = try context.invocation.jid(at: 1).bare
        _ = try await inRoom(context) { client, room in
            try await client.ban(target, from: room, reason: context.invocation.value("--reason"))
        }
        Console.print("banned \(target)")
    }

    // MARK: - Helpers

    /// Connects unseen, joins the room of the first operand (without its
    /// history), runs `body`, leaves, and returns `body`'s result with the
    /// events published meanwhile.
    private static func inRoom<T>(
        _ context: Context, _ body: @escaping (XMPPClient, JID) async throws -> T
    ) async throws -> (result: T, events: [ClientEvent]) {
        let room = try context.invocation.jid(at: 0).bare
        let client = try context.savedClient()
        return try await context.withConnection(client) { client in
            let nick = try await nick(for: room, context, client)
            try await client.joinRoom(room, nick: nick, password: context.invocation.value("--password"), history: .none)
            let result = try await body(client, room)
            try await client.leaveRoom(room)
            return result
        }
    }

    /// The nickname for `room`: `--nick`, else the bookmark's, else the
    /// account's username.
    private static func nick(for room: JID, _ context: Context, _ client: XMPPClient) async throws -> String {
        if let nick = context.invocation.value("--nick") { return nick }
        let bookmark = try? await client.bookmarks().first { $0.room == room }
        return bookmark?.nick ?? client.configuration.jid.localpart ?? "user"
    }

    /// With `--autojoin`, bookmarks `room` to be joined at login as `nick`.
    private static func bookmarkIfAsked(_ room: JID, nick: String, _ context: Context, _ client: XMPPClient)
        async throws
    {
        guard context.invocation.flag("--autojoin") else { return }
        try await client.saveBookmark(
            RoomBookmark(room: room, nick: nick, password: context.invocation.value("--password"), autojoin: true))
    }

    /// Throws the bounce of the message `id`, if it bounced.
    private static func failIfBounced(_ id: String, _ events: [ClientEvent]) throws {
        for case .messageFailed(id, let from, let error) in events { throw CommandFailure(error).prefixed("\(from)") }
    }

    /// `text` as a JID.
    private static func jid(_ text: String) throws -> JID {
        do {
            return try JID(text)
        } catch {
            throw CommandFailure(.badData, "'\(text)' is not a valid JID: \(error)")
        }
    }
}
