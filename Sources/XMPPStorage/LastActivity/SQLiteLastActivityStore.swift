import SQLiteKit

/// A `LastActivityStore` in the table `last_activity` (migration
/// `0006-last-activity`): one row per account.
public final class SQLiteLastActivityStore: LastActivityStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func lastLogout(of username: String) throws -> LastLogout? {
        let sql = """
            SELECT l.timestamp, l.status FROM last_activity AS l JOIN accounts AS a ON a.id = l.account_id
            WHERE a.username = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            guard try statement.step() else { return nil }
            return LastLogout(timestamp: statement.int(at: 0), status: statement.string(at: 1))
        }
    }

    public func setLastLogout(_ logout: LastLogout, of username: String) throws {
        try database.upsertPerAccount(
            """
            INSERT INTO last_activity (account_id, timestamp, status) VALUES (?, ?, ?)
            ON CONFLICT (account_id) DO UPDATE SET timestamp = excluded.timestamp, status = excluded.status
            """, of: username, values: logout.timestamp, logout.status)
    }
}
