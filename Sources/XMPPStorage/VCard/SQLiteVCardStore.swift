import SQLiteKit

/// A `VCardStore` in the table `vcards` (migration `0004-vcards`): one row
/// per account, the XML as text.
public final class SQLiteVCardStore: VCardStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func vCard(of username: String) throws -> String? {
        let sql = """
            SELECT v.xml FROM vcards AS v JOIN accounts AS a ON a.id = v.account_id
            WHERE a.username = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            return try statement.step() ? statement.string(at: 0) : nil
        }
    }

    public func setVCard(_ xml: String, of username: String) throws {
        try database.upsertPerAccount(
            """
            INSERT INTO vcards (account_id, xml) VALUES (?, ?)
            ON CONFLICT (account_id) DO UPDATE SET xml = excluded.xml
            """, of: username, values: xml)
    }
}
