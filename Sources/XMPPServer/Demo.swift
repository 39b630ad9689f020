import Foundation
import XMPPCore
import XMPPStorage

/// `swiftletd demo`: a server ready for an app developer in one command,
/// in the spirit of Openfire's `-demoboot`: three accounts that are each
/// other's contacts (`both` subscriptions), messages already waiting
/// offline, so the first login of an unchanged XMPPFramework app shows a
/// roster, presence and chat at once, and a persistent group chat room,
/// `lobby`, owned by alice with bob and carol as members.
public enum Demo {
    /// The demo accounts and the names their contacts see.
    public static let users = [("alice", "Alice"), ("bob", "Bob"), ("carol", "Carol")]
    /// The password of every demo account.
    public static let password = "swiftlet"

    /// Messages waiting offline when the demo starts: sender, recipient, text.
    static let waiting = [
        ("bob", "alice", "Hi Alice! This message waited offline for you (XEP-0160)."),
        ("carol", "alice", "Welcome to Swiftlet. Try sending a message to bob."),
        ("alice", "bob", "Hello Bob, from the demo."),
    ]

    /// The demo's group chat room, at the group chat service.
    public static let room = "lobby"

    /// Messages in the room's history when the demo starts: nickname, text.
    static let roomHistory = [
        ("Alice", "Welcome to the lobby, the demo's group chat (XEP-0045)."),
        ("Bob", "Hi all! Joining shows these earlier messages, from the room's archive."),
        ("Carol", "And the room remembers us: we are members."),
    ]

    /// Why the demo will not start: its password is public, so anyone who
    /// can reach the server could log in as the demo users.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates the demo accounts, rosters and waiting messages in
    /// `config`'s data directory; does nothing to accounts that exist.
    /// - Parameter passwordsMayBePublic: The user said the demo may listen
    ///   beyond loopback, or join a data directory with other accounts.
    /// - Throws: `Refusal` for either without `passwordsMayBePublic`.
    public static func seed(_ config: ServerConfig, passwordsMayBePublic: Bool = false) throws {
        let confirm = "; add --i-know-demo-passwords-are-public if that is what you want"
        if !passwordsMayBePublic, let exposed = (config.listen + config.directTLSListen).first(where: { !$0.isLoopback }) {
            throw Refusal(
                description: "the demo would listen on \(exposed), where anyone who reaches it can log in as "
                    + "alice, bob or carol with the password '\(password)'" + confirm)
        }
        let storage = try Storage.open(directory: config.dataDirectory)
        defer { storage.shutdown() }
        let others = try storage.perform { try $0.accounts.usernames() }.filter { name in !users.contains { $0.0 == name } }
        if !passwordsMayBePublic, let other = others.first {
            throw Refusal(
                description: "\(config.dataDirectory) holds other accounts (\(other)@\(config.domain)); the demo "
                    + "accounts' password '\(password)' is public" + confirm)
        }
        let domain = config.domain
        let credentials = try StoredAccounts.credentials(for: password, iterations: config.authentication.scramIterations)
        let now = Int(Date().timeIntervalSince1970 * 1000)
        try storage.perform { stores in
            var created: Set<String> = []
            for (user, _) in users {
                if try stores.accounts.createAccount(user, credentials: credentials) { created.insert(user) }
            }
            for (user, _) in users where created.contains(user) {
                for (contact, name) in users where contact != user {
                    let item = RosterItem(contact: "\(contact)@\(domain)", name: name, groups: ["Demo"], state: .both)
                    _ = try stores.roster.put(item, of: user)
                }
            }
            for (index, (from, to, text)) in waiting.enumerated() where created.contains(to) {
                var message = Message(type: .chat, to: try JID("\(to)@\(domain)"), id: "demo-\(index + 1)", body: text)
                message.element[attribute: "from"] = "\(from)@\(domain)/demo"
                guard let xml = StoredStanza.serialize(message.element) else { continue }
                _ = try stores.offline.store(
                    xml, from: "\(from)@\(domain)/demo", timestamp: now + index, for: to,
                    quota: OfflineQuota(messages: .max))
            }
            if created.contains("alice"), config.muc.enabled { try seedRoom(stores, config: config, now: now) }
        }
    }

    /// Stores the `lobby` room: persistent, members-only, named "Lobby",
    /// owned by alice, with bob and carol as members, and a few messages in
    /// its archive, which its history comes from.
    private static func seedRoom(_ stores: Stores, config: ServerConfig, now: Int) throws {
        let domain = config.domain
        var configuration = MUCRoomConfiguration(maxUsers: config.muc.maxOccupants, historyLength: config.muc.historyLength)
        configuration.name = "Lobby"
        configuration.description = "The demo's group chat"
        configuration.persistent = true
        configuration.membersOnly = true
        configuration.occupantsMayInvite = true
        let owner = try JID("alice@\(domain)")
        var affiliations = [owner: MUCAffiliationRecord(affiliation: .owner)]
        for (user, _) in users where user != "alice" {
            affiliations[try JID("\(user)@\(domain)")] = MUCAffiliationRecord(affiliation: .member)
        }
        let record = MUCRoomRecord(creator: owner, configuration: configuration, affiliations: affiliations, subject: nil)
        guard let data = record.encoded else { throw MUCRoomRecord.EncodingFailed() }
        try stores.mucRooms.save(StoredMUCRoom(name: room, data: data))
        let address = "\(room)@\(config.mucService)"
        let first = try stores.roomArchive.lastSequence() + 1
        let items = try roomHistory.enumerated().map { index, entry in
            let (nick, text) = entry
            var message = Element(
                "message", namespace: NS.client, attributes: ["type": "groupchat", "from": "\(address)/\(nick)"])
            message.append(Element("body", namespace: NS.client, children: [.text(text)]))
            guard let stanza = StoredStanza.serialize(message) else { throw MUCRoomRecord.EncodingFailed() }
            return RoomArchiveItem(
                room: address,
                item: ArchiveItem(
                    sequence: first + Int64(index), timestamp: now + index,
                    peer: ArchivePeer(bare: address, resource: nick), stanza: stanza))
        }
        try stores.roomArchive.append(items, keepingPerRoom: config.muc.archiveMaxMessages)
    }

    /// What the demo prints once it listens: where to connect, how to log
    /// in, and how to make a simulator or device trust the certificate.
    public static func banner(
        config: ServerConfig, addresses: [SocketAddressDescription], lanAddresses: [String], isTemporary: Bool,
        webChatURL: String? = nil
    ) -> String {
        let domain = config.domain
        var lines = [
            "",
            "Swiftlet demo server for \(domain)",
            "",
            "Accounts (password \"\(password)\"), each other's contacts with presence both ways:",
        ]
        lines += users.map { "  \($0.0)@\(domain)" }
        lines += [
            "Messages are waiting offline for alice and bob.",
        ]
        if config.muc.enabled {
            lines += [
                "Group chat: \(room)@\(config.mucService) (alice owns it; bob and carol are members; "
                    + "a few messages in its history)."
            ]
        }
        lines += [
            "",
            "Listening on: " + addresses.map(\.text).joined(separator: ", "),
            "",
        ]
        if let webChatURL {
            lines += ["Web chat, to be the other person: \(webChatURL) (Demo buttons log in as alice, bob, carol)", ""]
        }
        lines += [
            "XMPPFramework (iOS Simulator, same Mac):",
            "  stream.myJID = XMPPJID(string: \"alice@\(domain)\")",
            "  stream.hostName = \"127.0.0.1\"; stream.hostPort = \(addresses.first?.port ?? 5222)",
        ]
        if !lanAddresses.isEmpty {
            lines += ["Real device on the same network: stream.hostName = one of " + lanAddresses.joined(separator: ", ")]
        }
        let policy = config.effectiveTLSPolicy
        lines += ["", "TLS: \(policy)."]
        if case .generated = config.certificateSource, let authority = config.localAuthority {
            lines += [
                "  Certificate: issued by this data directory's local CA, \(authority.certificatePath)",
                "  SHA-256 fingerprint of the CA: \(authority.fingerprint)",
                "  An unchanged app uses TLS only when STARTTLS is required. To trust the CA here, in the",
                "  Simulator or on a phone: swiftletd trust --data-dir \(config.dataDirectory)",
                "  (the Simulator alone: xcrun simctl keychain booted add-root-cert \(authority.certificatePath)).",
            ]
        }
        lines += [
            "",
            isTemporary
                ? "Data: \(config.dataDirectory) (temporary, deleted when the demo stops)"
                : "Data: \(config.dataDirectory)",
            "Stop with Ctrl-C.",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// A listening address as the banner shows it.
    public struct SocketAddressDescription: Sendable {
        /// `127.0.0.1:5222` or `[::1]:5222`.
        public var text: String
        /// The port.
        public var port: UInt16

        /// Describes one listener.
        public init(text: String, port: UInt16) {
            self.text = text
            self.port = port
        }
    }
}
