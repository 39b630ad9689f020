/// A `RosterStore` in dictionaries, for tests and for servers that need
/// nothing to survive a restart.
///
/// It asks `accounts` whether an account exists, but cannot see an account
/// being deleted: `Stores(accounts:)` wires that, deleting the roster with
/// the account as `ON DELETE CASCADE` does for `SQLiteRosterStore`.
/// Usernames and contacts are compared by their UTF-8 bytes, as SQLite does.
public final class InMemoryRosterStore: RosterStore, AccountScopedStore {
    private struct Roster {
        var items: [[UInt8]: RosterItem] = [:]
        var version = 0

        mutating func put(_ item: RosterItem) -> Int {
            items[key(item.contact)] = item
            version += 1
            return version
        }

        mutating func remove(_ contact: String) -> Int? {
            guard items.removeValue(forKey: key(contact)) != nil else { return nil }
            version += 1
            return version
        }
    }

    private let accounts: any AccountStore
    private var rosters: [[UInt8]: Roster] = [:]

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        self.accounts = accounts
    }

    public func items(of username: String) -> [RosterItem] {
        guard let roster = rosters[key(username)] else { return [] }
        return roster.items.values.sorted {
            $0.contact.utf8.lexicographicallyPrecedes($1.contact.utf8)
        }
    }

    public func item(_ contact: String, of username: String) -> RosterItem? {
        rosters[key(username)]?.items[key(contact)]
    }

    public func put(_ item: RosterItem, of username: String) throws -> Int {
        guard try accounts.accountExists(username) else {
            throw UnknownAccountError(username: username)
        }
        return rosters[key(username), default: Roster()].put(item)
    }

    public func remove(_ contact: String, of username: String) -> Int? {
        rosters[key(username)]?.remove(contact)
    }

    public func version(of username: String) -> Int {
        rosters[key(username)]?.version ?? 0
    }

    public func removeEverywhere(_ contact: String) -> [RemovedRosterEntry] {
        let owners = rosters.keys.filter { rosters[$0]?.items[key(contact)] != nil }
            .sorted { $0.lexicographicallyPrecedes($1) }
        return owners.compactMap { owner in
            guard let item = rosters[owner]?.items[key(contact)], let version = rosters[owner]?.remove(contact)
            else { return nil }
            return RemovedRosterEntry(owner: String(decoding: owner, as: UTF8.self), item: item, version: version)
        }
    }

    /// Forgets the roster and version of a deleted account.
    func removeAll(of username: String) {
        rosters[key(username)] = nil
    }
}

/// The dictionary key of a username or contact: its UTF-8 bytes, so that
/// strings Swift calls equal but SQLite does not stay apart.
private func key(_ string: String) -> [UInt8] {
    Array(string.utf8)
}
