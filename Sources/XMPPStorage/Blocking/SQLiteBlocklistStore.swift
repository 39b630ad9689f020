import SQLiteKit

/// A `BlocklistStore` in the table `blocklist_items` (migration
/// `0005-blocklists`): one row per blocked JID, keyed by
/// `(account_id, jid)`, so the sorted listing, the membership test and the
/// cascade all walk the primary key.
public final class SQLiteBlocklistStore: BlocklistStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func blocklist(of username: String) throws -> [String] {
        // The default BINARY collation orders JIDs by their UTF-8 bytes.
        let sql = """
            SELECT b.jid FROM blocklist_items AS b JOIN accounts AS a ON a.id = b.account_id
            WHERE a.username = ? ORDER BY b.jid
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            var jids: [String] = []
            while try statement.step() {
                jids.append(statement.string(at: 0) ?? "")
            }
            return jids
        }
    }

    public func blocks(_ username: String, anyOf jids: [String]) throws -> Bool {
        guard !jids.isEmpty else { return false }
        // One statement for any number of JIDs: they arrive as a JSON array.
        let sql = """
            SELECT 1 FROM blocklist_items AS b JOIN accounts AS a ON a.id = b.account_id
            WHERE a.username = ? AND b.jid IN (SELECT value FROM json_each(?)) LIMIT 1
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, try JSONText.array(jids))
            return try statement.step()
        }
    }

    public func block(_ jids: [String], for username: String) throws {
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            try run("INSERT INTO blocklist_items (account_id, jid) VALUES (?, ?) ON CONFLICT DO NOTHING", jids, accountID)
        }
    }

    public func unblock(_ jids: [String], for username: String) throws {
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else { return }
            try run("DELETE FROM blocklist_items WHERE account_id = ? AND jid = ?", jids, accountID)
        }
    }

    public func unblockAll(for username: String) throws {
        guard let accountID = try database.accountID(of: username) else { return }
        try database.withCachedStatement("DELETE FROM blocklist_items WHERE account_id = ?") { statement in
            try statement.bind(accountID)
            try statement.run()
        }
    }

    /// Runs `sql`, whose parameters are the account id and a JID, once per JID.
    private func run(_ sql: String, _ jids: [String], _ accountID: Int64) throws {
        try database.withCachedStatement(sql) { statement in
            for jid in jids {
                try statement.bind(accountID, jid)
                try statement.run()
                statement.reset()
            }
        }
    }
}
