/// The message archives of the server's users (XEP-0313: Message Archive
/// Management) and their archiving preferences (XEP-0441).
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts, compared byte for byte. An unknown
/// username reads as an empty archive with no stored preferences; adding
/// data for it throws `UnknownAccountError`. Deleting the account deletes
/// its archive and preferences.
///
/// Items are ordered by their `sequence`, which the caller assigns from
/// one counter for all archives in routing order (XEP-0313 §3.1
/// "chronological order", which is not timestamp order: clocks can step
/// back). A sequence names one item of one archive and is never used
/// again, even after the item is deleted; clients see it only disguised
/// (the server's ids are a secret permutation of it). A message's copies
/// have sequences below every later message's.
public protocol ArchiveStore: AnyObject {
    /// Adds each message to the archives of its copies' owners, skipping
    /// copies whose owner has no account and copies whose sequence their
    /// archive already holds. A message is stored once, however many
    /// archives keep it.
    ///
    /// In `SQLiteArchiveStore` each message is inserted on its own unless
    /// the caller groups the calls in one `Database.transaction`, as the
    /// server does for a batch.
    ///
    /// - Returns: How many copies were added.
    @discardableResult
    func append(_ messages: [ArchivedMessage]) throws -> Int

    /// The highest sequence ever appended, deleted items included; 0 when
    /// nothing was ever appended. The server resumes counting above it.
    func lastSequence() throws -> Int64

    /// The page of `username`'s archive that `query` asks for, in archive
    /// order (oldest first), whichever way it pages.
    ///
    /// - Throws: `ArchiveItemNotFound` when an item the query names
    ///   (`after`, `before`, one of `ids`, or its position) is not in this
    ///   user's archive.
    func query(_ query: ArchiveQuery, for username: String) throws -> ArchivePage

    /// The oldest and newest items of `username`'s archive, or `nil` when
    /// it is empty (XEP-0313 §5, archive metadata).
    func bounds(for username: String) throws -> (oldest: ArchiveItem, newest: ArchiveItem)?

    /// The number of items in `username`'s archive.
    func count(for username: String) throws -> Int

    /// The number of items in all users' archives.
    func totalCount() throws -> Int

    /// Removes, from all archives, the oldest messages up to the first one
    /// (in archive order) stamped at or after `timestamp`, at most `limit`
    /// of them, each with all its copies, so that retention never leaves a
    /// hole in an archive (XEP-0313 §3.2: deleted messages "MUST be the
    /// oldest").
    ///
    /// - Returns: How many messages were removed; `limit` means there may
    ///   be more.
    func removeMessages(before timestamp: Int, limit: Int) throws -> Int

    /// `username`'s stored preferences, or `nil` when the user never set any.
    func preferences(of username: String) throws -> ArchivePreferences?

    /// Stores `username`'s preferences, replacing earlier ones.
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func setPreferences(_ preferences: ArchivePreferences, of username: String) throws

    /// Every stored preference, by username: the server keeps them in memory
    /// so that routing a message never waits for storage.
    func allPreferences() throws -> [String: ArchivePreferences]
}

/// A routed message as the archives keep it: stored once, with one copy
/// per archive.
public struct ArchivedMessage: Sendable, Hashable {
    /// When the server routed the message, in milliseconds since
    /// 1970-01-01 00:00 UTC.
    public var timestamp: Int
    /// The message stanza, serialized.
    public var stanza: String
    /// One per archive that keeps the message.
    public var copies: [ArchiveCopy]

    /// Creates a message.
    public init(timestamp: Int, stanza: String, copies: [ArchiveCopy]) {
        self.timestamp = timestamp
        self.stanza = stanza
        self.copies = copies
    }
}

/// One archive's copy of a message.
public struct ArchiveCopy: Sendable, Hashable {
    /// The archive's owner, a username.
    public var owner: String
    /// The item's place in the order of all archives, positive.
    public var sequence: Int64
    /// The other party: the recipient of an outgoing message, the sender
    /// of an incoming one.
    public var peer: ArchivePeer

    /// Creates a copy.
    public init(owner: String, sequence: Int64, peer: ArchivePeer) {
        self.owner = owner
        self.sequence = sequence
        self.peer = peer
    }
}

/// One item of an archive as queries return it (XEP-0313 §3).
public struct ArchiveItem: Sendable, Hashable {
    /// The item's place in the order of all archives, positive.
    public var sequence: Int64
    /// When the server routed the message, in milliseconds since
    /// 1970-01-01 00:00 UTC.
    public var timestamp: Int
    /// The other party: the recipient of an outgoing message, the sender
    /// of an incoming one.
    public var peer: ArchivePeer
    /// The message stanza, serialized.
    public var stanza: String

    /// Creates an item.
    public init(sequence: Int64, timestamp: Int, peer: ArchivePeer, stanza: String) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.peer = peer
        self.stanza = stanza
    }
}

/// A JID as archives match it (XEP-0313 §4.1.1): the bare JID, and the
/// resource if there is one.
public struct ArchivePeer: Sendable, Hashable {
    /// The prepared bare JID.
    public var bare: String
    /// The prepared resource, or `nil` for a bare JID.
    public var resource: String?

    /// Creates a peer.
    public init(bare: String, resource: String? = nil) {
        self.bare = bare
        self.resource = resource
    }

    /// Whether an item with this peer matches a `with` filter of `filter`:
    /// a bare filter matches the bare JID and any of its resources, a full
    /// one only itself.
    public func matches(_ filter: ArchivePeer) -> Bool {
        bare == filter.bare && (filter.resource == nil || resource == filter.resource)
    }
}

/// What a query asks of an archive: filters (XEP-0313 §4.1) and a page
/// (XEP-0059).
public struct ArchiveQuery: Sendable, Hashable {
    /// Only items with this peer (see `ArchivePeer.matches`).
    public var with: ArchivePeer?
    /// Only items stamped at or after this time (milliseconds since 1970).
    public var start: Int?
    /// Only items stamped at or before this time (milliseconds since 1970).
    public var end: Int?
    /// Only items after this one (the `after-id` field).
    public var after: Int64?
    /// Only items before this one (the `before-id` field).
    public var before: Int64?
    /// Only these items (the `ids` field).
    public var items: [Int64]?
    /// Where the page starts.
    public var position: Position
    /// The most items in the page.
    public var max: Int
    /// Stop adding items once their stanzas hold this many bytes (UTF-8);
    /// a page holds at least one item whatever its size.
    public var byteLimit: Int
    /// Count the matching items only up to this many: counting is the one
    /// part of a page that reads every match, so a bound keeps a page of a
    /// large archive as cheap as one of a small archive. Beyond it the
    /// page's `count` is nil.
    public var countLimit: Int = .max

    /// Where a page lies in the matching items (XEP-0059 §2).
    public enum Position: Sendable, Hashable {
        /// The oldest matching items.
        case first
        /// The oldest matching items after this item (`<after/>`).
        case after(Int64)
        /// The newest matching items (an empty `<before/>`).
        case last
        /// The newest matching items before this item (`<before/>`).
        case before(Int64)

        /// Whether the page is counted back from its end.
        public var isBackward: Bool {
            switch self {
            case .first, .after: false
            case .last, .before: true
            }
        }

        /// The item the position is relative to, if any.
        public var item: Int64? {
            switch self {
            case .first, .last: nil
            case .after(let item), .before(let item): item
            }
        }
    }

    /// A query for the first `max` items, with no filter.
    public init(position: Position = .first, max: Int, byteLimit: Int = .max) {
        precondition(max >= 0, "negative page size")
        self.position = position
        self.max = max
        self.byteLimit = byteLimit
    }
}

/// One page of query results.
public struct ArchivePage: Sendable, Hashable {
    /// The items, oldest first.
    public var items: [ArchiveItem]
    /// How many items match the filters, on every page together; nil when
    /// more than the query's `countLimit` do.
    public var count: Int?
    /// Whether no matching item lies beyond this page in its direction:
    /// after it when paging forward, before it when paging back.
    public var complete: Bool

    /// Creates a page.
    public init(items: [ArchiveItem], count: Int?, complete: Bool) {
        self.items = items
        self.count = count
        self.complete = complete
    }
}

/// A query named an item that is not in the archive (XEP-0313 §4.3 asks
/// for `item-not-found`).
public struct ArchiveItemNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sequence that was asked for.
    public let sequence: Int64

    /// Creates the error for `sequence`.
    public init(sequence: Int64) {
        self.sequence = sequence
    }

    public var description: String { "no archived item \(sequence)" }
}

/// A user's archiving preferences (XEP-0441 §2.1).
public struct ArchivePreferences: Sendable, Hashable {
    /// What happens to messages with JIDs in neither list (XEP-0441 §2.1.1).
    public enum Default: String, Sendable, Hashable, CaseIterable {
        /// Archive every message.
        case always
        /// Archive nothing.
        case never
        /// Archive messages with contacts in the user's roster.
        case roster
    }

    /// The rule for JIDs in neither list.
    public var defaultRule: Default
    /// JIDs whose messages are always archived, prepared, in the order given.
    public var always: [String]
    /// JIDs whose messages are never archived, prepared, in the order given.
    public var never: [String]

    /// Creates preferences.
    public init(defaultRule: Default, always: [String] = [], never: [String] = []) {
        self.defaultRule = defaultRule
        self.always = always
        self.never = never
    }
}
