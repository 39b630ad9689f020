import SQLiteKit

/// A `PrivateXMLStore` in the table `private_xml` (migration
/// `0012-private-xml`): one row per element, keyed by
/// `(account_id, namespace, name)`, so lookups, the count and the cascade
/// walk the primary key.
public final class SQLitePrivateXMLStore: PrivateXMLStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func element(namespace: String, name: String, of username: String) throws -> String? {
        let sql = """
            SELECT p.xml FROM private_xml AS p JOIN accounts AS a ON a.id = p.account_id
            WHERE a.username = ? AND p.namespace = ? AND p.name = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, namespace, name)
            return try statement.step() ? statement.string(at: 0) : nil
        }
    }

    public func setElement(_ xml: String, namespace: String, name: String, of username: String) throws {
        try database.upsertPerAccount(
            """
            INSERT INTO private_xml (account_id, namespace, name, xml) VALUES (?, ?, ?, ?)
            ON CONFLICT (account_id, namespace, name) DO UPDATE SET xml = excluded.xml
            """, of: username, values: namespace, name, xml)
    }

    public func removeElement(namespace: String, name: String, of username: String) throws {
        let sql = """
            DELETE FROM private_xml
            WHERE account_id = (SELECT id FROM accounts WHERE username = ?) AND namespace = ? AND name = ?
            """
        try database.withCachedStatement(sql) { statement in
            try statement.bind(username, namespace, name)
            try statement.run()
        }
    }

    public func elementCount(of username: String) throws -> Int {
        let sql = """
            SELECT count(*) FROM private_xml AS p JOIN accounts AS a ON a.id = p.account_id WHERE a.username = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            _ = try statement.step()
            return Int(statement.int64(at: 0))
        }
    }
}
