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
}
