import Foundation
import SQLiteKit
import XMPPCore

/// The message archive: one row per message in `messages`, and one per
/// conversation in `conversations`, which keeps the latest message and the
/// unread count so that the conversation list reads one short index.
///
/// Timestamps are `INTEGER` milliseconds since 1970 (see `ArchivedMessage`).
/// Within a conversation, messages are ordered by timestamp, then by row id,
/// which is insertion order: SQLite gives a new row an id above every
/// existing one.
extension ClientStore {
    /// Adds a message to the archive, unless it is already there.
    ///
    /// A message is already there when the archive holds one of the same
    /// account, contact, direction and non-empty `id`, or of the same
    /// account and `serverID`: so a message received again through offline
    /// delivery, a carbon or a later archive sync (XEP-0313) is kept once.
    ///
    /// - Returns: `true` if the message was added, `false` for a duplicate,
    ///   in which case nothing changes.
    /// - Throws: `DatabaseError`.
    @discardableResult
    public func record(_ message: ArchivedMessage) async throws -> Bool {
        try await queue.perform { try $0.record(message) }
    }

    /// A page of a conversation, going back in time: the newest `limit`
    /// messages stamped strictly before `before` (or the newest of all),
    /// sorted oldest first.
    ///
    /// To page backwards, pass the first message's timestamp as the next
    /// `before`. So that this skips nothing when several messages share a
    /// timestamp (a server's `<delay/>` often has whole seconds), a page
    /// that would end inside such a group includes the whole group: it may
    /// hold more than `limit` messages.
    ///
    /// - Parameters:
    ///   - account: The account.
    ///   - contact: The other side; its resource is ignored.
    ///   - before: Only messages stamped strictly earlier; `nil` for the newest.
    ///   - limit: How many messages to return at least when there are
    ///     enough; more than 0.
    /// - Returns: The messages by timestamp, equal timestamps in the order
    ///   they were recorded.
    /// - Throws: `DatabaseError`.
    public func conversation(
        account: JID, contact: JID, before: Date? = nil, limit: Int = 50
    ) async throws -> [ArchivedMessage] {
        try await queue.perform { try $0.conversation(account: account, contact: contact, before: before, limit: limit) }
    }

    /// A page of a conversation, going forward in time: the oldest `limit`
    /// messages stamped strictly after `after`, sorted oldest first; for
    /// catching up from the last message shown.
    ///
    /// Like `conversation(account:contact:before:limit:)`, a page that
    /// would end inside a group of equal timestamps includes the whole group.
    ///
    /// - Throws: `DatabaseError`.
    public func conversation(
        account: JID, contact: JID, after: Date, limit: Int = 50
    ) async throws -> [ArchivedMessage] {
        try await queue.perform { try $0.conversation(account: account, contact: contact, after: after, limit: limit) }
    }

    /// The account's conversations, the one with the newest message first,
    /// each with its latest message and unread count.
    ///
    /// - Parameter limit: How many conversations at most; more than 0.
    /// - Throws: `DatabaseError`.
    public func recentConversations(account: JID, limit: Int = 20) async throws -> [ConversationSummary] {
        try await queue.perform { try $0.recentConversations(account: account, limit: limit) }
    }

    /// The server's archive id (XEP-0359) of the newest one-to-one message
    /// that has one: where the next catch-up from the account's archive
    /// starts (a room's messages carry ids of the room's archive).
    ///
    /// - Throws: `DatabaseError`.
    public func latestServerID(account: JID) async throws -> String? {
        try await queue.perform { try $0.latestServerID(account: account) }
    }

    /// Marks every message of a conversation read.
    ///
    /// - Throws: `DatabaseError`.
    public func markRead(account: JID, contact: JID) async throws {
        try await queue.perform { try $0.markRead(account: account, contact: contact) }
    }
}

/// The archive's tables and SQL.
extension ClientStore.Tables {
    /// Creates the archive's tables (migration `0002-archive`).
    static func createArchive(_ database: Database) throws {
        // messages_by_conversation (SQLite appends the row id to each entry)
        // serves paging in (timestamp, id) order. The two unique indexes
        // find duplicates; an empty stanza id or a missing server id never
        // matches. messages_unread holds only the unread rows markRead
        // looks for. conversations_by_recency serves the conversation list.
        try database.execute(
            """
            CREATE TABLE messages (
                id INTEGER PRIMARY KEY,
                account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                contact TEXT NOT NULL,
                outgoing INTEGER NOT NULL CHECK (outgoing IN (0, 1)),
                stanza_id TEXT NOT NULL,
                server_id TEXT,
                body TEXT NOT NULL,
                timestamp INTEGER NOT NULL,
                read INTEGER NOT NULL CHECK (read IN (0, 1))
            );
            CREATE INDEX messages_by_conversation ON messages (account_id, contact, timestamp);
            CREATE UNIQUE INDEX messages_by_stanza_id
                ON messages (account_id, contact, outgoing, stanza_id) WHERE stanza_id <> '';
            CREATE UNIQUE INDEX messages_by_server_id
                ON messages (account_id, server_id) WHERE server_id IS NOT NULL;
            CREATE INDEX messages_unread ON messages (account_id, contact) WHERE read = 0;
            CREATE TABLE conversations (
                account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                contact TEXT NOT NULL,
                last_message_id INTEGER NOT NULL REFERENCES messages (id),
                last_timestamp INTEGER NOT NULL,
                unread_count INTEGER NOT NULL CHECK (unread_count >= 0),
                PRIMARY KEY (account_id, contact)
            ) WITHOUT ROWID;
            CREATE INDEX conversations_by_recency
                ON conversations (account_id, last_timestamp, last_message_id);
            """)
    }

    /// Gives messages the sender's nickname, for those in a room
    /// (migration `0004-room-messages`).
    static func addRoomNicknames(_ database: Database) throws {
        try database.execute("ALTER TABLE messages ADD COLUMN nick TEXT")
    }

    /// `ClientStore.record(_:)`'s SQL, on the store's thread.
    func record(_ message: ArchivedMessage) throws -> Bool {
        try database.transaction {
            let accountID = try createAccountID(of: message.account)
            let contact = message.contact.description
            let timestamp = ArchivedMessage.milliseconds(message.timestamp)
            try run(
                """
                INSERT INTO messages
                    (account_id, contact, outgoing, stanza_id, server_id, body, timestamp, read, nick)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """,
                accountID, contact, Self.integer(message.isOutgoing), message.id,
                message.serverID, message.body, timestamp, Self.integer(message.isRead), message.nick)
            guard database.changes > 0 else { return false }
            // The new row has the highest id, so it is the latest of its
            // conversation unless an older-stamped message came late.
            try run(
                """
                INSERT INTO conversations
                    (account_id, contact, last_message_id, last_timestamp, unread_count)
                VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (account_id, contact) DO UPDATE SET
                    unread_count = unread_count + excluded.unread_count,
                    last_message_id = iif(
                        excluded.last_timestamp >= last_timestamp,
                        excluded.last_message_id, last_message_id),
                    last_timestamp = max(excluded.last_timestamp, last_timestamp)
                """,
                accountID, contact, database.lastInsertedRowID, timestamp,
                Self.integer(!message.isRead))
            return true
        }
    }

    /// `ClientStore.conversation(account:contact:before:limit:)`'s SQL, on
    /// the store's thread.
    func conversation(
        account: JID, contact: JID, before: Date? = nil, limit: Int = 50
    ) throws -> [ArchivedMessage] {
        try page(
            .older, account: account, contact: contact,
            from: before.map(ArchivedMessage.milliseconds) ?? .max, limit: limit)
    }

    /// `ClientStore.conversation(account:contact:after:limit:)`'s SQL, on
    /// the store's thread.
    func conversation(
        account: JID, contact: JID, after: Date, limit: Int = 50
    ) throws -> [ArchivedMessage] {
        try page(
            .newer, account: account, contact: contact,
            from: ArchivedMessage.milliseconds(after), limit: limit)
    }

    /// `ClientStore.recentConversations(account:limit:)`'s SQL, on the store's thread.
    func recentConversations(account: JID, limit: Int = 20) throws -> [ConversationSummary] {
        precondition(limit > 0, "recentConversations needs a positive limit")
        guard let accountID = try accountID(of: account) else { return [] }
        return try database.withCachedStatement(Self.recentConversationsSQL) { statement in
            try statement.bind(accountID, limit)
            var summaries: [ConversationSummary] = []
            while try statement.step() {
                let message = try Self.message(from: statement, account: account)
                summaries.append(
                    ConversationSummary(
                        contact: message.contact, lastMessage: message,
                        unreadCount: statement.int(at: Self.messageColumnCount)))
            }
            return summaries
        }
    }

    /// `ClientStore.latestServerID(account:)`'s SQL, on the store's thread.
    func latestServerID(account: JID) throws -> String? {
        guard let accountID = try accountID(of: account) else { return nil }
        return try database.withCachedStatement(
            """
            SELECT server_id FROM messages WHERE account_id = ? AND server_id IS NOT NULL AND nick IS NULL
            ORDER BY timestamp DESC, id DESC LIMIT 1
            """
        ) { statement in
            try statement.bind(accountID)
            return try statement.step() ? statement.string(at: 0) : nil
        }
    }

    /// `ClientStore.markRead(account:contact:)`'s SQL, on the store's thread.
    func markRead(account: JID, contact: JID) throws {
        try database.transaction {
            guard let accountID = try accountID(of: account) else { return }
            let contact = contact.bare.description
            try run(
                "UPDATE messages SET read = 1 WHERE account_id = ? AND contact = ? AND read = 0",
                accountID, contact)
            try run(
                "UPDATE conversations SET unread_count = 0 WHERE account_id = ? AND contact = ?",
                accountID, contact)
        }
    }

    /// The conversation list's SQL, with the parameters account id and limit.
    static let recentConversationsSQL = """
        SELECT \(messageColumns), c.unread_count
        FROM conversations AS c JOIN messages AS m ON m.id = c.last_message_id
        WHERE c.account_id = ?
        ORDER BY c.last_timestamp DESC, c.last_message_id DESC
        LIMIT ?
        """

    // MARK: Pages

    /// The direction a page extends from its starting point.
    enum PageDirection {
        case older, newer

        /// The page's SQL, with the parameters account id, contact,
        /// starting timestamp and limit.
        ///
        /// The inner query finds the timestamp of the `limit`th message from
        /// the start (or the farthest, when there are fewer); the outer one
        /// takes every message up to and including that timestamp, which is
        /// what keeps a group of equal timestamps whole.
        var sql: String {
            let (beyond, order, farthest, within) =
                switch self {
                case .older: ("<", "DESC", "min", ">=")
                case .newer: (">", "ASC", "max", "<=")
                }
            return """
                SELECT \(ClientStore.Tables.messageColumns) FROM messages AS m
                WHERE m.account_id = ?1 AND m.contact = ?2 AND m.timestamp \(beyond) ?3
                    AND m.timestamp \(within) (
                        SELECT \(farthest)(timestamp) FROM (
                            SELECT timestamp FROM messages
                            WHERE account_id = ?1 AND contact = ?2 AND timestamp \(beyond) ?3
                            ORDER BY timestamp \(order) LIMIT ?4))
                ORDER BY m.timestamp, m.id
                """
        }
    }

    private func page(
        _ direction: PageDirection, account: JID, contact: JID, from timestamp: Int64, limit: Int
    ) throws -> [ArchivedMessage] {
        precondition(limit > 0, "a conversation page needs a positive limit")
        guard let accountID = try accountID(of: account) else { return [] }
        return try database.withCachedStatement(direction.sql) { statement in
            try statement.bind(accountID, contact.bare.description, timestamp, limit)
            var messages: [ArchivedMessage] = []
            while try statement.step() {
                messages.append(try Self.message(from: statement, account: account))
            }
            return messages
        }
    }

    // MARK: Rows

    /// The columns `message(from:account:)` reads, from table alias `m`.
    static let messageColumns =
        "m.contact, m.outgoing, m.stanza_id, m.server_id, m.body, m.timestamp, m.read, m.nick"
    /// How many columns `messageColumns` names.
    static let messageColumnCount = 8

    /// Reads a message from the first `messageColumns` of the current row.
    ///
    /// - Throws: `DatabaseError` with `.corrupt` for a value the schema
    ///   should have kept out.
    private static func message(from statement: Statement, account: JID) throws -> ArchivedMessage {
        guard let id = statement.string(at: 2), let body = statement.string(at: 4) else {
            throw DatabaseError(
                resultCode: .corrupt, message: "damaged archived message", sql: statement.sql)
        }
        return ArchivedMessage(
            account: account, contact: try jid(at: 0, of: statement), body: body,
            timestamp: ArchivedMessage.date(milliseconds: statement.int64(at: 5)),
            isOutgoing: statement.int(at: 1) != 0, id: id, serverID: statement.string(at: 3),
            isRead: statement.int(at: 6) != 0, nick: statement.string(at: 7))
    }
}
