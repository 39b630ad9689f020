/// A `BlocklistStore` in a dictionary of sets, for tests and for servers
/// that need nothing to survive a restart. `Stores(accounts:)` deletes a
/// blocklist with its account.
public final class InMemoryBlocklistStore: BlocklistStore, AccountScopedStore {
    private var lists: PerAccount<Set<[UInt8]>>

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        lists = PerAccount(accounts: accounts)
    }

    public func blocklist(of username: String) -> [String] {
        (lists[username] ?? []).sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
    }

    public func blocks(_ username: String, anyOf jids: [String]) -> Bool {
        guard let list = lists[username] else { return false }
        return jids.contains { list.contains(Array($0.utf8)) }
    }

    public func block(_ jids: [String], for username: String) throws {
        try lists.set((lists[username] ?? []).union(jids.map { Array($0.utf8) }), for: username)
    }

    public func unblock(_ jids: [String], for username: String) throws {
        guard let list = lists[username] else { return }
        try lists.set(list.subtracting(jids.map { Array($0.utf8) }), for: username)
    }

    public func unblockAll(for username: String) {
        lists.removeAll(of: username)
    }

    func removeAll(of username: String) {
        lists.removeAll(of: username)
    }
}
