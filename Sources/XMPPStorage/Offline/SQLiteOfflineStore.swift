import SQLiteKit

/// An `OfflineStore` in the table `offline_messages` (migrations
/// `0003-offline`, `0011-offline-sizes` and `0018-offline-usage`).
///
/// Ids come from `AUTOINCREMENT`, so an id is never reused: removing by an
/// id the server read earlier can never hit a message stored since. The
/// index on `account_id` (whose entries SQLite orders by rowid within each
/// account) serves the listing in arrival order and the cascade when an
/// account is deleted. The quota reads the account's row of
/// `offline_usage`, which triggers keep up to date as messages come and
/// go, so that storing costs the same however many messages wait.
public final class SQLiteOfflineStore: OfflineStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func store(
        _ stanza: String, from sender: String, timestamp: Int, for username: String, quota: OfflineQuota
    ) throws -> Bool {
        let size = stanza.utf8.count
        return try database.transaction {
            guard let accountID = try database.accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            let kept = try usage(accountID: accountID)
            guard kept.messages < quota.messages, size <= quota.bytes - kept.bytes else { return false }
            try database.withCachedStatement(
                """
                INSERT INTO offline_messages (account_id, sender, timestamp, stanza, size)
                VALUES (?, ?, ?, ?, ?)
                """
            ) { statement in
                try statement.bind(accountID, sender, timestamp, stanza, size)
                try statement.run()
            }
            return true
        }
    }

    public func messages(for username: String) throws -> [OfflineMessage] {
        let sql = """
            SELECT m.id, m.stanza, m.sender, m.timestamp
            FROM offline_messages AS m JOIN accounts AS a ON a.id = m.account_id
            WHERE a.username = ? ORDER BY m.id
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            var messages: [OfflineMessage] = []
            while try statement.step() {
                guard let stanza = statement.string(at: 1), let sender = statement.string(at: 2)
                else {
                    throw DatabaseError(
                        resultCode: .corrupt, message: "damaged offline message record", sql: sql)
                }
                messages.append(
                    OfflineMessage(
                        id: statement.int(at: 0), stanza: stanza, sender: sender,
                        timestamp: statement.int(at: 3)))
            }
            return messages
        }
    }

    @discardableResult
    public func remove(_ ids: Set<Int>, for username: String) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try database.transaction {
            guard let accountID = try database.accountID(of: username) else { return 0 }
            // One statement for all of them, the ids as a JSON array.
            return try database.withCachedStatement(
                "DELETE FROM offline_messages WHERE account_id = ? AND id IN (SELECT value FROM json_each(?))"
            ) { statement in
                try statement.bind(accountID, "[" + ids.map(String.init).joined(separator: ",") + "]")
                try statement.run()
                return database.changes
            }
        }
    }

    public func count(for username: String) throws -> Int {
        guard let accountID = try database.accountID(of: username) else { return 0 }
        return try usage(accountID: accountID).messages
    }

    public func totalCount() throws -> Int {
        try database.withCachedStatement("SELECT count(*) FROM offline_messages") { statement in
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    /// How many messages the account keeps, and their bytes: its row of
    /// `offline_usage`, or none before its first message.
    private func usage(accountID: Int64) throws -> (messages: Int, bytes: Int) {
        try database.withCachedStatement(
            "SELECT messages, bytes FROM offline_usage WHERE account_id = ?"
        ) { statement in
            try statement.bind(accountID)
            guard try statement.step() else { return (0, 0) }
            return (statement.int(at: 0), statement.int(at: 1))
        }
    }

}
