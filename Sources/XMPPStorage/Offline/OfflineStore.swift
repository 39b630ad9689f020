/// A message the server kept for a user who had no available resource
/// (RFC 6121 §8.5.2.2, XEP-0160).
public struct OfflineMessage: Sendable, Hashable {
    /// The store's identifier: unique across all accounts and never reused,
    /// increasing in arrival order.
    public var id: Int
    /// The message stanza, serialized.
    public var stanza: String
    /// The sender's JID, as a string.
    public var sender: String
    /// When the server received the message, in milliseconds since
    /// 1970-01-01 00:00 UTC, as the caller gave it.
    public var timestamp: Int

    /// Creates a stored message.
    public init(id: Int, stanza: String, sender: String, timestamp: Int) {
        self.id = id
        self.stanza = stanza
        self.sender = sender
        self.timestamp = timestamp
    }
}

/// How much one account may keep in offline storage.
public struct OfflineQuota: Sendable, Hashable {
    /// The most messages; at least 0.
    public var messages: Int
    /// The most bytes, counting each message's serialized stanza in UTF-8;
    /// at least 0.
    public var bytes: Int

    /// Creates a quota; without `bytes`, only the messages are counted.
    public init(messages: Int, bytes: Int = .max) {
        precondition(messages >= 0 && bytes >= 0, "negative offline quota")
        self.messages = messages
        self.bytes = bytes
    }
}

/// The messages waiting for users to come online (RFC 6121 §8.5.2.2,
/// XEP-0160: Best Practices for Handling Offline Messages).
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts, compared byte for byte. An unknown
/// username reads as an account without messages; storing for it throws
/// `UnknownAccountError`. Deleting the account deletes its messages.
public protocol OfflineStore: AnyObject {
    /// Keeps a message for `username`, unless that would take the account
    /// beyond `quota` (in messages or in bytes).
    ///
    /// In `SQLiteOfflineStore` each call is its own transaction, committed
    /// (with the default `synchronous = FULL`, on disk) before it returns,
    /// so the server may acknowledge the message afterwards. Inside a
    /// transaction (a job's `Database.transaction`, or the group of a
    /// grouped storage job) it is a savepoint, and the message is durable
    /// once that transaction has committed.
    ///
    /// - Parameters:
    ///   - stanza: The serialized message stanza.
    ///   - sender: The sender's JID.
    ///   - timestamp: When the server received it, in milliseconds since 1970 (UTC).
    ///   - username: The recipient's prepared localpart.
    ///   - quota: What the account may hold, this message included.
    /// - Returns: `false`, storing nothing, if the message does not fit in
    ///   the quota.
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func store(
        _ stanza: String, from sender: String, timestamp: Int, for username: String, quota: OfflineQuota
    ) throws -> Bool

    /// The messages kept for `username`, in the order they were stored
    /// (by `id`, whatever their timestamps).
    func messages(for username: String) throws -> [OfflineMessage]

    /// Removes the messages of `username` whose ids are in `ids`; ids of
    /// other accounts' messages, or of none, are ignored.
    ///
    /// - Returns: How many messages were removed.
    @discardableResult
    func remove(_ ids: Set<Int>, for username: String) throws -> Int

    /// The number of messages kept for `username`.
    func count(for username: String) throws -> Int

    /// The number of messages kept for all users.
    func totalCount() throws -> Int
}
