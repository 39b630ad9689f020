/// An in-memory store holding data of accounts, which it must forget when
/// the account is deleted (as `ON DELETE CASCADE` does in SQLite).
/// `Stores(accounts:)` calls `removeAll(of:)` for each one.
protocol AccountScopedStore: AnyObject {
    /// Forgets everything kept for a deleted account.
    func removeAll(of username: String)
}

/// One value per account, keyed by the username's UTF-8 bytes (as SQLite
/// compares text), refusing to store for an account that does not exist:
/// the in-memory twin of a table keyed by `account_id`.
struct PerAccount<Value> {
    private let accounts: any AccountStore
    private var values: [[UInt8]: Value] = [:]

    init(accounts: any AccountStore) {
        self.accounts = accounts
    }

    /// The value of `username`, or nil.
    subscript(username: String) -> Value? {
        values[Array(username.utf8)]
    }

    /// Stores `value` for `username`.
    ///
    /// - Throws: `UnknownAccountError` if there is no such account.
    mutating func set(_ value: Value, for username: String) throws {
        guard try accounts.accountExists(username) else {
            throw UnknownAccountError(username: username)
        }
        values[Array(username.utf8)] = value
    }

    /// Forgets the value of `username`.
    mutating func removeAll(of username: String) {
        values[Array(username.utf8)] = nil
    }

    /// The usernames whose value `isIncluded` accepts.
    func usernames(where isIncluded: (Value) -> Bool) -> [String] {
        values.compactMap { isIncluded($0.value) ? String(decoding: $0.key, as: UTF8.self) : nil }
    }

    /// Changes every account's value with `change`: for what one account
    /// keeps about others (subscriptions that go with the subscriber).
    mutating func updateEach(_ change: (inout Value) -> Void) {
        for key in values.keys { change(&values[key]!) }
    }
}

/// A store of one value per account in memory: the in-memory twin of the
/// SQLite stores with one row per account. Each store protocol it serves
/// is a conditional conformance (`InMemoryVCardStore`,
/// `InMemoryLastActivityStore`). `Stores(accounts:)` deletes a value with
/// its account.
public final class InMemoryPerAccountStore<Value>: AccountScopedStore {
    var values: PerAccount<Value>

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        values = PerAccount(accounts: accounts)
    }

    func removeAll(of username: String) {
        values.removeAll(of: username)
    }
}
