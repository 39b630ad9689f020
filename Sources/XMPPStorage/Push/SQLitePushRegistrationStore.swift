import SQLiteKit

/// A `PushRegistrationStore` in the table `push_registrations` (migration
/// `0019-push`), keyed by `(account_id, service, node)`, so every call and
/// the cascade walk the primary key.
///
/// `SQLiteAccountStore.replaceCredentials(of:with:)` deletes the account's
/// rows in its own transaction.
public final class SQLitePushRegistrationStore: PushRegistrationStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func register(_ registration: PushRegistration, for username: String, maxRegistrations: Int) throws -> Bool {
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            let exists = try database.withCachedStatement(
                "SELECT 1 FROM push_registrations WHERE account_id = ? AND service = ? AND node = ?"
            ) { statement in
                try statement.bind(accountID, registration.service, registration.node)
                return try statement.step()
            }
            if !exists {
                let count = try database.withCachedStatement(
                    "SELECT count(*) FROM push_registrations WHERE account_id = ?"
                ) { statement in
                    try statement.bind(accountID)
                    return try statement.step() ? Int(statement.int64(at: 0)) : 0
                }
                guard count < maxRegistrations else { return false }
            }
            try database.run(
                """
                INSERT INTO push_registrations (account_id, service, node, publish_options, failures)
                VALUES (?, ?, ?, ?, 0)
                ON CONFLICT (account_id, service, node) DO UPDATE SET
                    publish_options = excluded.publish_options, failures = 0
                """, accountID, registration.service, registration.node, registration.publishOptions)
            return true
        }
    }

    public func registrations(of username: String) throws -> [PushRegistration] {
        let sql = """
            SELECT p.service, p.node, p.publish_options, p.failures
            FROM push_registrations AS p JOIN accounts AS a ON a.id = p.account_id
            WHERE a.username = ? ORDER BY p.service, p.node
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            var registrations: [PushRegistration] = []
            while try statement.step() {
                registrations.append(
                    PushRegistration(
                        service: statement.string(at: 0) ?? "", node: statement.string(at: 1) ?? "",
                        publishOptions: statement.string(at: 2), failures: Int(statement.int64(at: 3))))
            }
            return registrations
        }
    }

    public func usernamesWithRegistrations() throws -> [String] {
        try database.withCachedStatement(
            "SELECT username FROM accounts WHERE id IN (SELECT DISTINCT account_id FROM push_registrations)"
        ) { statement in
            var usernames: [String] = []
            while try statement.step() { usernames.append(statement.string(at: 0) ?? "") }
            return usernames
        }
    }

    public func remove(service: String, node: String?, of username: String) throws -> Int {
        try database.run(
            """
            DELETE FROM push_registrations WHERE account_id = (SELECT id FROM accounts WHERE username = ?)
                AND service = ? AND (?3 IS NULL OR node = ?3)
            """, username, service, node)
    }

    public func removeAll(of username: String) throws {
        try database.run(
            "DELETE FROM push_registrations WHERE account_id = (SELECT id FROM accounts WHERE username = ?)", username)
    }

    public func recordFailure(service: String, node: String, of username: String, limit: Int) throws -> Int {
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else { return 0 }
            try database.run(
                "UPDATE push_registrations SET failures = failures + 1 WHERE account_id = ? AND service = ? AND node = ?",
                accountID, service, node)
            let failures = try database.withCachedStatement(
                "SELECT failures FROM push_registrations WHERE account_id = ? AND service = ? AND node = ?"
            ) { statement in
                try statement.bind(accountID, service, node)
                return try statement.step() ? Int(statement.int64(at: 0)) : 0
            }
            if failures >= limit {
                try database.run(
                    "DELETE FROM push_registrations WHERE account_id = ? AND service = ? AND node = ?",
                    accountID, service, node)
            }
            return failures
        }
    }

    public func clearFailures(service: String, node: String, of username: String) throws {
        try database.run(
            """
            UPDATE push_registrations SET failures = 0
            WHERE account_id = (SELECT id FROM accounts WHERE username = ?) AND service = ? AND node = ?
            """, username, service, node)
    }
}
