import SQLiteKit
import XMPPCore

/// An `AccountStore` in the tables `accounts` and `scram_credentials`
/// (migration `0001-accounts`).
///
/// Replacing the credentials also deletes the account's FAST tokens
/// (`SQLiteFastTokenStore`), in the same transaction.
///
/// Every other per-user table references `accounts (id)` with
/// `ON DELETE CASCADE`, so deleting the account row deletes everything of
/// that user in the same statement.
public final class SQLiteAccountStore: AccountStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func createAccount(_ username: String, credentials: [SCRAMCredentials]) throws -> Bool {
        credentials.checkValidForAccount()
        return try database.transaction {
            try database.withCachedStatement(
                "INSERT INTO accounts (username) VALUES (?) ON CONFLICT (username) DO NOTHING"
            ) { statement in
                try statement.bind(username)
                try statement.run()
            }
            guard database.changes == 1 else { return false }
            try insert(credentials, accountID: database.lastInsertedRowID)
            return true
        }
    }

    public func credentials(of username: String, for hashFunction: HashFunction) throws
        -> SCRAMCredentials?
    {
        let sql = """
            SELECT c.salt, c.iterations, c.stored_key, c.server_key
            FROM scram_credentials AS c JOIN accounts AS a ON a.id = c.account_id
            WHERE a.username = ? AND c.hash_function = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, hashFunction.rawValue)
            guard try statement.step() else { return nil }
            guard
                let credentials = SCRAMCredentials(
                    hashFunction: hashFunction, salt: statement.blob(at: 0) ?? [],
                    iterations: statement.int(at: 1), storedKey: statement.blob(at: 2) ?? [],
                    serverKey: statement.blob(at: 3) ?? [])
            else {
                throw DatabaseError(
                    resultCode: .corrupt, message: "damaged SCRAM credentials record", sql: sql)
            }
            return credentials
        }
    }

    public func replaceCredentials(of username: String, with credentials: [SCRAMCredentials])
        throws -> Bool
    {
        credentials.checkValidForAccount()
        return try database.transaction {
            guard let accountID = try database.accountID(of: username) else { return false }
            try database.withCachedStatement(
                "DELETE FROM scram_credentials WHERE account_id = ?"
            ) { statement in
                try statement.bind(accountID)
                try statement.run()
            }
            // A new password ends the FAST tokens the old one got (XEP-0484).
            try database.run("DELETE FROM fast_tokens WHERE account_id = ?", accountID)
            // And the push services it enabled (XEP-0357).
            try database.run("DELETE FROM push_registrations WHERE account_id = ?", accountID)
            try insert(credentials, accountID: accountID)
            return true
        }
    }

    public func deleteAccount(_ username: String) throws -> Bool {
        try database.run("DELETE FROM accounts WHERE username = ?", username) > 0
    }

    public func accountExists(_ username: String) throws -> Bool {
        try database.accountID(of: username) != nil
    }

    public func usernames() throws -> [String] {
        // The default BINARY collation orders by UTF-8 bytes.
        try database.withCachedStatement("SELECT username FROM accounts ORDER BY username") {
            statement in
            var usernames: [String] = []
            while try statement.step() {
                usernames.append(statement.string(at: 0) ?? "")
            }
            return usernames
        }
    }

    public func accountCount() throws -> Int {
        try database.withCachedStatement("SELECT count(*) FROM accounts") { statement in
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    private func insert(_ credentials: [SCRAMCredentials], accountID: Int64) throws {
        let sql = """
            INSERT INTO scram_credentials
                (account_id, hash_function, salt, iterations, stored_key, server_key)
            VALUES (?, ?, ?, ?, ?, ?)
            """
        try database.withCachedStatement(sql) { statement in
            for set in credentials {
                try statement.bind(
                    accountID, set.hashFunction.rawValue, set.salt, set.iterations,
                    set.storedKey, set.serverKey)
                try statement.run()
                statement.reset()
            }
        }
    }
}
