/// A `swiftlet` command; the roster's actions are commands of two words.
public enum Command: String, Sendable, CaseIterable {
    case register, login, passwd, unregister
    case send
    case sendFile = "send-file"
    case chat, listen, presence
    case rosterList = "roster list"
    case rosterAdd = "roster add"
    case rosterRemove = "roster remove"
    case rosterAccept = "roster accept"
    case rosterReject = "roster reject"
    case history, recent
    case profile
    case setProfile = "set-profile"
    case block, unblock, blocklist
    case roomList = "room list"
    case roomCreate = "room create"
    case roomJoin = "room join"
    case roomLeave = "room leave"
    case roomSend = "room send"
    case roomOccupants = "room occupants"
    case roomInvite = "room invite"
    case roomSubject = "room subject"
    case roomHistory = "room history"
    case roomKick = "room kick"
    case roomBan = "room ban"

    /// The first words of the commands that take an action word after
    /// them: the roster's and the rooms'.
    public static let groups = ["roster", "room"]

    /// What the command takes and does, for parsing and `--help`.
    public var spec: CommandSpec {
        switch self {
        case .register:
            CommandSpec(
                operands: ["JID"], summary: "Create an account on its server and log in.",
                details: """
                    Creates the account JID by in-band registration (XEP-0077), then logs \
                    in and saves the login as 'login' does. The password is read from the \
                    terminal (twice), or from the first line of standard input.
                    """)
        case .login:
            CommandSpec(
                operands: ["JID"], summary: "Log in once with the password and save the login.",
                details: """
                    Checks the password by logging in, then saves the account, the server \
                    (--server) and the TLS policy (--tls) to HOME/accounts/JID.json, mode \
                    600. The password is not saved: only SCRAM keys derived from it, which \
                    later commands log in with. The password is read from the terminal, or \
                    from the first line of standard input.
                    """)
        case .passwd:
            CommandSpec(
                operands: [], summary: "Change the account's password.",
                details: """
                    Changes the password on the server and saves the new login. The new \
                    password is read like register's.
                    """)
        case .unregister:
            CommandSpec(
                operands: [], summary: "Delete the account on the server.",
                details: """
                    Deletes the account on the server and its saved login; the local \
                    archive is kept. Needs --yes.
                    """,
                options: [.flag("--yes", "Really delete the account.")])
        case .send:
            CommandSpec(
                operands: ["JID", "TEXT..."], summary: "Send a chat message.",
                details: """
                    Sends the words of TEXT, joined by spaces, to JID (or standard input \
                    when TEXT is '-'), and keeps it in the archive. Fails when the server \
                    bounces it, for example because JID does not exist.
                    """)
        case .sendFile:
            CommandSpec(
                operands: ["JID", "PATH"], summary: "Share a file (an image, a voice note…).",
                details: """
                    Uploads the file at PATH to the server's HTTP upload service \
                    (XEP-0363) and sends JID a chat message with its download URL, also as \
                    out-of-band data (XEP-0066), as chat apps do; prints the URL. The \
                    MIME type comes from the file name unless --type is given.
                    """,
                options: [.value("--type", "TYPE", "The MIME type, such as image/png.")])
        case .chat:
            CommandSpec(
                operands: ["JID"], summary: "Chat with JID, line by line.",
                details: """
                    Sends each line of standard input to JID and prints incoming messages \
                    (from anyone) as listen does. Ends at the end of input, on a line \
                    '/quit', on SIGINT or SIGTERM, or after --timeout. You are available \
                    while chatting.
                    """)
        case .listen:
            CommandSpec(
                operands: [], summary: "Be available and print what happens, one event per line.",
                details: """
                    Goes online and prints each event on a line of its own, starting with \
                    its kind: connection, message, message-failed, presence, roster, \
                    subscription-request, subscription-answer, room-message, room-presence, \
                    room-subject, room-invitation. Rooms bookmarked with autojoin are \
                    joined. Messages kept while you were \
                    offline arrive first. Runs until SIGINT or SIGTERM, --count events, or \
                    --timeout (exit status 68 when --count events did not come in time).
                    """,
                options: ListenOptions.specs)
        case .presence:
            CommandSpec(
                operands: ["SHOW"], summary: "Set your presence and stay online, printing events as listen does.",
                details: """
                    SHOW is available, chat, away, xa, dnd or unavailable. Presence lasts \
                    as long as the connection, so presence stays connected, printing events \
                    like listen, until interrupted or --timeout.
                    """,
                options: [
                    .value("--status", "TEXT", "The status text."),
                    .value("--priority", "N", "The priority, -128 to 127 (default 0)."),
                ] + ListenOptions.specs)
        case .rosterList:
            CommandSpec(
                operands: [], summary: "List the contacts.",
                details: """
                    Prints one contact per line: JID, subscription (none, to, from, both; \
                    ', pending' while a request is unanswered), then "name" and [groups] \
                    when set.
                    """,
                options: [.json("one JSON object per contact")])
        case .rosterAdd:
            CommandSpec(
                operands: ["JID"], summary: "Add a contact and ask to see their presence.",
                details: "Adds JID to the roster and sends a subscription request.",
                options: [
                    .value("--name", "NAME", "Your name for the contact."),
                    .value("--group", "GROUP", "A group to put the contact in; repeat for several.", repeatable: true),
                ])
        case .rosterRemove:
            CommandSpec(
                operands: ["JID"], summary: "Remove a contact.",
                details: "Removes JID from the roster; subscriptions both ways end.")
        case .rosterAccept:
            CommandSpec(
                operands: ["JID"], summary: "Let JID see your presence.",
                details: """
                    Approves JID's subscription request and, unless --no-subscribe-back, \
                    asks to see JID's presence in turn.
                    """,
                options: [.flag("--no-subscribe-back", "Do not ask to see JID's presence.")])
        case .rosterReject:
            CommandSpec(
                operands: ["JID"], summary: "Refuse or revoke JID's subscription.",
                details: "Refuses JID's subscription request, or ends an approved one.")
        case .history:
            CommandSpec(
                operands: ["JID"], summary: "Print the conversation with JID from the local archive.",
                details: """
                    Prints the newest messages, oldest first, one per line: time (UTC), \
                    sender, text. Marks the conversation read. The archive holds what was \
                    sent and received by this HOME's commands; with --from-server the newest \
                    messages are fetched from the server's archive (XEP-0313) first, so \
                    what other devices sent and received shows too.
                    """,
                options: Self.historyOptions(archive: "the server's"))
        case .profile:
            CommandSpec(
                operands: ["JID"], summary: "Show JID's profile (vCard), your own included.",
                details: """
                    Prints the full name, nickname, email and avatar (type, size and the \
                    SHA-1 that presence carries) from JID's vCard (XEP-0054, XEP-0153), \
                    one per line.
                    """,
                options: [.json("one JSON object")])
        case .setProfile:
            CommandSpec(
                operands: [], summary: "Publish your profile (vCard) and avatar.",
                details: """
                    Replaces your vCard with the given parts (those not given are left \
                    out) and announces the avatar's hash in your presence.
                    """,
                options: [
                    .value("--name", "NAME", "Your full name."),
                    .value("--nickname", "NICK", "Your nickname."),
                    .value("--email", "ADDRESS", "Your email address."),
                    .value("--avatar", "PATH", "A picture (PNG, JPEG…) as your avatar."),
                ])
        case .block:
            CommandSpec(
                operands: ["JID"], summary: "Block JID.",
                details: """
                    The server drops what JID sends you (messages bounce) and shows you \
                    to JID as offline (XEP-0191).
                    """)
        case .unblock:
            CommandSpec(
                operands: ["JID"], summary: "Unblock JID.", details: "Lets JID reach you again.")
        case .blocklist:
            CommandSpec(operands: [], summary: "List the JIDs you block.", details: "One JID per line.")
        case .roomList:
            CommandSpec(
                operands: [], summary: "List your bookmarked rooms, or the rooms of a service.",
                details: """
                    Prints one bookmarked room (XEP-0402) per line: room, autojoin when \
                    listen, presence and chat join it, then nick and "name" when set. With \
                    --service, lists the public rooms of that group chat service instead \
                    (disco#items): room, then "name".
                    """,
                options: [
                    .value("--service", "JID", "A group chat service, such as conference.example.com."),
                    .json("one JSON object per room"),
                ])
        case .roomCreate:
            CommandSpec(
                operands: ["ROOM"], summary: "Create a room and become its owner.",
                details: """
                    Joins ROOM, which must not exist yet, and unlocks it: with the \
                    service's defaults (an instant room, XEP-0045 §10.1.2) unless \
                    configuration options are given. A room that is not --persistent \
                    vanishes with its last occupant, so create one you leave at once with \
                    --persistent or --autojoin.
                    """,
                options: Self.nickOption + [
                    .value("--name", "NAME", "The room's name."),
                    .flag("--persistent", "Keep the room when no one is in it."),
                    .flag("--members-only", "Let only members join."),
                    .value("--password", "PASSWORD", "The password to join."),
                    Self.autojoinOption,
                ])
        case .roomJoin:
            CommandSpec(
                operands: ["ROOM"], summary: "Join a room and chat there, line by line.",
                details: """
                    Joins ROOM, prints what happens there (and everything listen prints), \
                    and sends each line of standard input to everyone in it, until the \
                    end of input, a line '/quit', SIGINT or SIGTERM, or --timeout. With \
                    --autojoin the room is bookmarked, so that listen, presence and chat \
                    join it too.
                    """,
                options: Self.nickOption + [
                    .value("--password", "PASSWORD", "The room's password."),
                    Self.autojoinOption,
                ] + [.json("one JSON object per event")])
        case .roomLeave:
            CommandSpec(
                operands: ["ROOM"], summary: "Stop joining a room at login.",
                details: """
                    Removes ROOM's bookmark, so that listen, presence and chat no longer \
                    join it.
                    """)
        case .roomSend:
            CommandSpec(
                operands: ["ROOM", "TEXT..."], summary: "Send a message to everyone in a room.",
                details: """
                    Joins ROOM, sends the words of TEXT (or standard input when TEXT is \
                    '-') to everyone there, waits for the room to pass it on, and leaves.
                    """,
                options: Self.nickOption + [.value("--password", "PASSWORD", "The room's password.")])
        case .roomOccupants:
            CommandSpec(
                operands: ["ROOM"], summary: "List who is in a room.",
                details: """
                    Joins ROOM, prints one occupant per line (nickname, role, \
                    affiliation, then the real JID when the room shows it), and leaves.
                    """,
                options: Self.nickOption + [
                    .value("--password", "PASSWORD", "The room's password."), .json("one JSON object per occupant"),
                ])
        case .roomInvite:
            CommandSpec(
                operands: ["ROOM", "JID"], summary: "Invite someone into a room.",
                details: """
                    Asks ROOM to invite JID (XEP-0045 §7.8.2), which needs you to be in \
                    it, so the command joins it first; with --direct the invitation goes \
                    straight to JID instead (XEP-0249).
                    """,
                options: Self.nickOption + [
                    .value("--reason", "TEXT", "Words to go with the invitation."),
                    .flag("--direct", "Send the invitation yourself rather than through the room."),
                ])
        case .roomSubject:
            CommandSpec(
                operands: ["ROOM", "TEXT..."], summary: "Change a room's subject.",
                details: "Joins ROOM, sets its subject to the words of TEXT ('-' clears it), and leaves.",
                options: Self.nickOption)
        case .roomHistory:
            CommandSpec(
                operands: ["ROOM"], summary: "Print a room's messages from the local archive.",
                details: """
                    Prints the newest messages of ROOM, oldest first, one per line: time \
                    (UTC), ROOM/nickname, text. The archive holds what was said while this \
                    HOME's commands were in the room; with --from-server the newest \
                    messages are fetched from the room's archive (XEP-0313) first.
                    """,
                options: Self.historyOptions(archive: "the room's"))
        case .roomKick:
            CommandSpec(
                operands: ["ROOM", "NICK"], summary: "Kick an occupant out of a room.",
                details: "Joins ROOM, takes NICK's role away (XEP-0045 §8.2; moderators only), and leaves.",
                options: Self.nickOption + [.value("--reason", "TEXT", "Why, as NICK is told.")])
        case .roomBan:
            CommandSpec(
                operands: ["ROOM", "JID"], summary: "Ban someone from a room.",
                details: """
                    Joins ROOM, makes JID an outcast (XEP-0045 §9.1; admins and owners \
                    only), which also removes them, and leaves.
                    """,
                options: Self.nickOption + [.value("--reason", "TEXT", "Why, as JID is told.")])
        case .recent:
            CommandSpec(
                operands: [], summary: "List conversations, the most recent first.",
                details: """
                    Prints one conversation per line from the local archive: contact, \
                    unread count, then the last message as history prints it.
                    """,
                options: [
                    .value("--limit", "N", "How many conversations (default 20)."),
                    .json("one JSON object per conversation"),
                ])
        }
    }

    /// Whether the command stays online until stopped; `--timeout` then
    /// bounds how long it runs.
    public var runsUntilStopped: Bool {
        self == .listen || self == .presence || self == .chat || self == .roomJoin
    }

    /// The options of `history` and `room history`, which fetch from
    /// `archive` message archive.
    private static func historyOptions(archive: String) -> [OptionSpec] {
        [
            .flag("--from-server", "Fetch from \(archive) message archive first."),
            .value("--limit", "N", "How many messages (default 50)."),
            .value("--before", "TIME", "Only messages before TIME (ISO 8601, e.g. 2026-05-01T12:00:00Z)."),
            .json("one JSON object per message"),
        ]
    }

    /// `--nick`, which room commands join with.
    private static let nickOption: [OptionSpec] = [
        .value("--nick", "NICK", "Your nickname in the room (default: the bookmark's, else your username).")
    ]

    /// `--autojoin`, bookmarking a room to join at login.
    private static let autojoinOption = OptionSpec.flag(
        "--autojoin", "Bookmark the room so that listen, presence and chat join it.")
}

/// What a command takes and does.
public struct CommandSpec: Sendable {
    /// The operands' names, in order; a last one ending in `...` takes one
    /// or more words.
    public let operands: [String]
    /// One line for the command list.
    public let summary: String
    /// A paragraph for the command's help.
    public let details: String
    /// The options of this command, besides the global ones.
    public let options: [OptionSpec]

    init(operands: [String], summary: String, details: String, options: [OptionSpec] = []) {
        self.operands = operands
        self.summary = summary
        self.details = details
        self.options = options
    }

    /// Whether the last operand takes the remaining words.
    var isVariadic: Bool { operands.last?.hasSuffix("...") ?? false }
}

/// An option: a flag, or one that takes a value.
public struct OptionSpec: Sendable {
    /// The name with its dashes, such as `--limit`.
    public let name: String
    /// The value's placeholder (`N`); `nil` for a flag.
    public let value: String?
    /// What it does.
    public let help: String
    /// Whether it may be given more than once.
    public let repeatable: Bool

    /// An option that takes a value.
    static func value(_ name: String, _ value: String, _ help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, value: value, help: help, repeatable: repeatable)
    }

    /// An option without a value.
    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: nil, help: help, repeatable: false)
    }

    /// `--json`, printing `what`.
    static func json(_ what: String) -> OptionSpec {
        flag("--json", "Print \(what), for scripts.")
    }
}
