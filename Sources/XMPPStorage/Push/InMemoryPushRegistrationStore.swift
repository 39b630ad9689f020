/// A `PushRegistrationStore` in a list per account, for tests and for
/// servers that need nothing to survive a restart. `Stores(accounts:)`
/// deletes an account's registrations when the account is deleted or its
/// credentials are replaced.
public final class InMemoryPushRegistrationStore: PushRegistrationStore, AccountScopedStore {
    private var lists: PerAccount<[PushRegistration]>

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        lists = PerAccount(accounts: accounts)
    }

    public func register(_ registration: PushRegistration, for username: String, maxRegistrations: Int) throws -> Bool {
        var list = lists[username] ?? []
        var stored = registration
        stored.failures = 0
        if let index = list.firstIndex(where: { $0.isSame(as: registration) }) {
            list[index] = stored
        } else {
            guard list.count < maxRegistrations else { return false }
            list.append(stored)
            // As SQLite orders text: by UTF-8 bytes.
            list.sort { a, b in
                a.service != b.service
                    ? a.service.utf8.lexicographicallyPrecedes(b.service.utf8)
                    : a.node.utf8.lexicographicallyPrecedes(b.node.utf8)
            }
        }
        try lists.set(list, for: username)
        return true
    }

    public func registrations(of username: String) -> [PushRegistration] {
        lists[username] ?? []
    }

    public func usernamesWithRegistrations() -> [String] {
        lists.usernames(where: { !$0.isEmpty })
    }

    public func remove(service: String, node: String?, of username: String) throws -> Int {
        guard var list = lists[username] else { return 0 }
        let count = list.count
        list.removeAll { $0.service == service && (node == nil || $0.node == node) }
        try lists.set(list, for: username)
        return count - list.count
    }

    public func removeAll(of username: String) {
        lists.removeAll(of: username)
    }

    public func recordFailure(service: String, node: String, of username: String, limit: Int) throws -> Int {
        guard var list = lists[username],
            let index = list.firstIndex(where: { $0.service == service && $0.node == node })
        else { return 0 }
        list[index].failures += 1
        let failures = list[index].failures
        if failures >= limit { list.remove(at: index) }
        try lists.set(list, for: username)
        return failures
    }

    public func clearFailures(service: String, node: String, of username: String) throws {
        guard var list = lists[username],
            let index = list.firstIndex(where: { $0.service == service && $0.node == node })
        else { return }
        list[index].failures = 0
        try lists.set(list, for: username)
    }
}

extension PushRegistration {
    /// Whether `other` names the same service and node.
    fileprivate func isSame(as other: PushRegistration) -> Bool {
        service == other.service && node == other.node
    }
}
