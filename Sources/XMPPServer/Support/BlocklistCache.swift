import Synchronization
import XMPPCore

/// One user's blocked JIDs (XEP-0191), as prepared JID strings.
public struct Blocklist: Sendable, Equatable {
    /// The blocked JIDs.
    public private(set) var jids: Set<String>

    /// A list of `jids`.
    public init(_ jids: some Sequence<String> = []) {
        self.jids = Set(jids)
    }

    /// Whether an item blocks `jid`. XEP-0191 §4 (as XEP-0016 §2.1): an
    /// item matches its full JID, bare JID, `domain/resource` or domain.
    public func blocks(_ jid: JID) -> Bool {
        !jids.isEmpty && Self.forms(of: jid).contains { jids.contains($0) }
    }

    /// The forms of `jid` an item can name, most specific first.
    public static func forms(of jid: JID) -> [String] {
        var forms: [String] = []
        if let resource = jid.resourcepart {
            forms.append(jid.description)
            if jid.localpart != nil { forms.append(jid.domainpart + "/" + resource) }
        }
        if jid.localpart != nil { forms.append(jid.bare.description) }
        forms.append(jid.domainpart)
        return forms
    }

    mutating func insert(_ added: some Sequence<String>) { jids.formUnion(added) }
    mutating func remove(_ removed: some Sequence<String>) { jids.subtract(removed) }
    mutating func removeAll() { jids.removeAll() }
}

/// The blocklists of the users who have an authenticated session, shared by
/// every loop, so that routing decides without touching storage.
///
/// A session loads its user's list when it authenticates (before it can
/// bind, so a bound session's user always has an entry) and releases it
/// when it ends; the entry goes with the user's last session. Users with
/// no session have no entry: what reaches them goes through storage
/// (offline messages, subscription requests), where the stored list is
/// checked instead. Guarded by a mutex, held only for a lookup.
public final class BlocklistCache: Sendable {
    private struct Entry {
        var list: Blocklist
        var holders: Int
    }

    /// What XEP-0191 makes of a stanza between two local users.
    public enum Verdict: Sendable, Equatable {
        case allowed
        /// The sender blocks the recipient (§3.3: refused with
        /// `not-acceptable`).
        case senderBlocksRecipient
        /// The recipient blocks the sender (§3.3: dropped, or refused with
        /// `service-unavailable`).
        case recipientBlocksSender
    }

    private let entries = Mutex<[String: Entry]>([:])

    public init() {}

    /// Records that a session of `username` holds the list; the first
    /// holder's `loaded` list is kept, later ones only count (the cached
    /// list already has every change since).
    func retain(_ username: String, loaded: Blocklist) {
        entries.withLock { entries in
            entries[username, default: Entry(list: loaded, holders: 0)].holders += 1
        }
    }

    /// Records that a holder went away; the last one removes the entry.
    func release(_ username: String) {
        entries.withLock { entries in
            guard var entry = entries[username] else { return }
            entry.holders -= 1
            entries[username] = entry.holders > 0 ? entry : nil
        }
    }

    /// Applies a change the user made, if the user has an entry.
    func update(_ username: String, _ change: (inout Blocklist) -> Void) {
        entries.withLock { entries in
            guard entries[username] != nil else { return }
            change(&entries[username]!.list)
        }
    }

    /// The list of `username`, or nil when no session of theirs holds it.
    public func list(of username: String) -> Blocklist? {
        entries.withLock { $0[username]?.list }
    }

    /// How many users have an entry.
    public var count: Int {
        entries.withLock { $0.count }
    }

    /// What XEP-0191 makes of a stanza from `sender` to `recipient`, both
    /// local (one lock for both lists). A user's own resources never block
    /// each other; a user without an entry blocks nobody here.
    public func verdict(from sender: JID, to recipient: JID) -> Verdict {
        guard let from = sender.localpart, let to = recipient.localpart, from != to else { return .allowed }
        return entries.withLock { entries in
            if entries[from]?.list.blocks(recipient) == true { return .senderBlocksRecipient }
            if entries[to]?.list.blocks(sender) == true { return .recipientBlocksSender }
            return .allowed
        }
    }
}
