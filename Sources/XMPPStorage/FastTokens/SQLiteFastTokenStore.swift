import Foundation
import SQLiteKit

/// A `FastTokenStore` in the table `fast_tokens` (migration
/// `0017-fast-tokens`): one row per filled slot, keyed by
/// `(account_id, user_agent, slot)`, so a client's lookup, its rotation and
/// the cascade walk the primary key. Expiry times are milliseconds since
/// 1970.
///
/// `SQLiteAccountStore.replaceCredentials(of:with:)` deletes the account's
/// rows in its own transaction.
public final class SQLiteFastTokenStore: FastTokenStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func issue(_ record: FastTokenRecord, to username: String, maxClients: Int) throws {
        precondition(maxClients > 0, "a FAST token needs room for its own user agent")
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            try database.run(
                """
                INSERT INTO fast_tokens (account_id, user_agent, slot, mechanism, nonce, expiry)
                VALUES (?, ?, 'new', ?, ?, ?)
                ON CONFLICT (account_id, user_agent, slot) DO UPDATE SET
                    mechanism = excluded.mechanism, nonce = excluded.nonce, expiry = excluded.expiry
                """, accountID, record.userAgent, record.mechanism, record.nonce,
                record.expiry.fastTokenMilliseconds)
            // The other user agents beyond maxClients, those whose last
            // token expires first; a negative LIMIT would mean none.
            try database.run(
                """
                DELETE FROM fast_tokens WHERE account_id = ?1 AND user_agent IN (
                    SELECT user_agent FROM fast_tokens WHERE account_id = ?1 AND user_agent <> ?2
                    GROUP BY user_agent ORDER BY max(expiry), user_agent
                    LIMIT max(0, (SELECT count(DISTINCT user_agent) FROM fast_tokens WHERE account_id = ?1) - ?3))
                """, accountID, record.userAgent, maxClients)
        }
    }

    public func tokens(of username: String, userAgent: String, at now: Date) throws -> [FastTokenRecord] {
        let sql = """
            SELECT t.mechanism, t.nonce, t.expiry FROM fast_tokens AS t JOIN accounts AS a ON a.id = t.account_id
            WHERE a.username = ? AND t.user_agent = ? AND t.expiry > ? ORDER BY t.slot = 'current'
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, userAgent, now.fastTokenMilliseconds)
            var records: [FastTokenRecord] = []
            while try statement.step() {
                records.append(
                    FastTokenRecord(
                        userAgent: userAgent, mechanism: statement.string(at: 0) ?? "",
                        nonce: statement.blob(at: 1) ?? [], expiry: Date(fastTokenMilliseconds: statement.int64(at: 2))))
            }
            return records
        }
    }

    public func used(nonce: [UInt8], of username: String, userAgent: String) throws {
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else { return }
            try database.run(
                """
                DELETE FROM fast_tokens WHERE account_id = ?1 AND user_agent = ?2 AND slot = 'current' AND EXISTS (
                    SELECT 1 FROM fast_tokens WHERE account_id = ?1 AND user_agent = ?2 AND slot = 'new' AND nonce = ?3)
                """, accountID, userAgent, nonce)
            try database.run(
                """
                UPDATE fast_tokens SET slot = 'current'
                WHERE account_id = ? AND user_agent = ? AND slot = 'new' AND nonce = ?
                """, accountID, userAgent, nonce)
        }
    }

    public func invalidate(_ username: String, userAgent: String) throws {
        try database.run(
            "DELETE FROM fast_tokens WHERE account_id = (SELECT id FROM accounts WHERE username = ?) AND user_agent = ?",
            username, userAgent)
    }

    public func invalidateAll(of username: String) throws {
        try database.run(
            "DELETE FROM fast_tokens WHERE account_id = (SELECT id FROM accounts WHERE username = ?)", username)
    }

    public func removeExpired(at now: Date) throws -> Int {
        try database.run("DELETE FROM fast_tokens WHERE expiry <= ?", now.fastTokenMilliseconds)
    }
}
