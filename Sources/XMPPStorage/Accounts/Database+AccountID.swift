import SQLiteKit

extension Database {
    /// The row id of `username`'s account, or nil when there is none: the
    /// key every per-account table (credentials, roster, offline messages)
    /// refers to.
    func accountID(of username: String) throws -> Int64? {
        try withCachedStatement("SELECT id FROM accounts WHERE username = ?") { statement in
            try statement.bind(username)
            return try statement.step() ? statement.int64(at: 0) : nil
        }
    }

    /// Runs `sql`, whose first parameter is the account id and the others
    /// `values` in order (an upsert into a table with one row per account),
    /// in one transaction with the account lookup.
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func upsertPerAccount(_ sql: String, of username: String, values: (any DatabaseValueConvertible)?...) throws {
        try transaction {
            guard let accountID = try accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            try withCachedStatement(sql) { statement in
                try statement.bind(accountID, at: 1)
                for (offset, value) in values.enumerated() {
                    try statement.bind(value, at: offset + 2)
                }
                try statement.run()
            }
        }
    }
}
