/// An `OfflineStore` in the table `offline_messages` (migration `0003-offline`).
///
/// Ids come from `AUTOINCREMENT`, so an id is never reused: removing by an
/// id the server read earlier can never hit a message stored since. The
/// index on `account_id` (whose entries SQLite orders by rowid within each
/// account) serves the listing in arrival order, the count for the quota,
/// and the cascade when an account is deleted.
public final class SQLiteOfflineStore: OfflineStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func store(
        _ stanza: String, from sender: String, timestamp: Int, for username: String, quota: Int
    ) throws -> Bool {
        precondition(quota >= 0, "negative offline message quota")
        return try database.transaction {
            guard let accountID = try database.accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            guard try count(accountID: accountID) < quota else { return false }
            try database.withCachedStatement(
                """
                INSERT INTO offline_messages (account_id, sender, timestamp, stanza)
                VALUES (?, ?, ?, ?)
                """
            ) { statement in
                try statement.bind(accountID, sender, timestamp, stanza)
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
            return try database.withCachedStatement(
                "DELETE FROM offline_messages WHERE id = ? AND account_id = ?"
            ) { statement in
                var removed = 0
                for id in ids {
                    try statement.bind(id, accountID)
                    try statement.run()
                    statement.reset()
                    removed += database.changes
                }
                return removed
            }
        }
    }

    public func count(for username: String) throws -> Int {
        guard let accountID = try database.accountID(of: username) else { return 0 }
        return try count(accountID: accountID)
    }

    private func count(accountID: Int64) throws -> Int {
        try database.withCachedStatement(
            "SELECT count(*) FROM offline_messages WHERE account_id = ?"
        ) { statement in
            try statement.bind(accountID)
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

}
