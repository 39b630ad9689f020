/// An `OfflineStore` in a dictionary of arrays, for tests and for servers
/// that need nothing to survive a restart.
///
/// It asks `accounts` whether an account exists, but cannot see an account
/// being deleted: `Stores(accounts:)` wires that, deleting the messages with
/// the account as `ON DELETE CASCADE` does for `SQLiteOfflineStore`.
/// Usernames are compared by their UTF-8 bytes, as SQLite does.
public final class InMemoryOfflineStore: OfflineStore, AccountScopedStore {
    private let accounts: any AccountStore
    private var messages: [[UInt8]: [OfflineMessage]] = [:]
    /// The last id given out; like SQLite's `AUTOINCREMENT`, never reused.
    private var lastID = 0

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        self.accounts = accounts
    }

    public func store(
        _ stanza: String, from sender: String, timestamp: Int, for username: String, quota: OfflineQuota
    ) throws -> Bool {
        guard try accounts.accountExists(username) else {
            throw UnknownAccountError(username: username)
        }
        let key = Array(username.utf8)
        let kept = messages[key, default: []]
        let keptBytes = kept.reduce(0) { $0 + $1.stanza.utf8.count }
        guard kept.count < quota.messages, stanza.utf8.count <= quota.bytes - keptBytes else { return false }
        lastID += 1
        messages[key, default: []].append(
            OfflineMessage(id: lastID, stanza: stanza, sender: sender, timestamp: timestamp))
        return true
    }

    public func messages(for username: String) -> [OfflineMessage] {
        messages[Array(username.utf8)] ?? []
    }

    @discardableResult
    public func remove(_ ids: Set<Int>, for username: String) -> Int {
        let key = Array(username.utf8)
        guard let before = messages[key]?.count else { return 0 }
        messages[key]?.removeAll { ids.contains($0.id) }
        return before - (messages[key]?.count ?? 0)
    }

    public func count(for username: String) -> Int {
        messages[Array(username.utf8)]?.count ?? 0
    }

    public func totalCount() -> Int {
        messages.values.reduce(0) { $0 + $1.count }
    }

    /// Forgets the messages of a deleted account.
    func removeAll(of username: String) {
        messages[Array(username.utf8)] = nil
    }
}
