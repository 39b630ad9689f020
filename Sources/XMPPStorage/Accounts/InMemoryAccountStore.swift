import XMPPCore

/// An `AccountStore` in a dictionary, for tests and for servers that need
/// nothing to survive a restart.
///
/// Usernames are compared by their UTF-8 bytes, as `SQLiteAccountStore`
/// does, not by Swift's canonical equivalence.
public final class InMemoryAccountStore: AccountStore {
    private struct Account {
        let username: String
        var credentials: [HashFunction: SCRAMCredentials]
    }

    private var accounts: [[UInt8]: Account] = [:]

    /// Creates an empty store.
    public init() {}

    private static func key(_ username: String) -> [UInt8] {
        Array(username.utf8)
    }

    private static func byHashFunction(
        _ credentials: [SCRAMCredentials]
    ) -> [HashFunction: SCRAMCredentials] {
        credentials.checkValidForAccount()
        return Dictionary(uniqueKeysWithValues: credentials.map { ($0.hashFunction, $0) })
    }

    public func createAccount(_ username: String, credentials: [SCRAMCredentials]) -> Bool {
        let byHash = Self.byHashFunction(credentials)
        guard accounts[Self.key(username)] == nil else { return false }
        accounts[Self.key(username)] = Account(username: username, credentials: byHash)
        return true
    }

    public func credentials(of username: String, for hashFunction: HashFunction)
        -> SCRAMCredentials?
    {
        accounts[Self.key(username)]?.credentials[hashFunction]
    }

    public func replaceCredentials(of username: String, with credentials: [SCRAMCredentials])
        -> Bool
    {
        let byHash = Self.byHashFunction(credentials)
        guard accounts[Self.key(username)] != nil else { return false }
        accounts[Self.key(username)]?.credentials = byHash
        return true
    }

    public func deleteAccount(_ username: String) -> Bool {
        accounts.removeValue(forKey: Self.key(username)) != nil
    }

    public func accountExists(_ username: String) -> Bool {
        accounts[Self.key(username)] != nil
    }

    public func usernames() -> [String] {
        accounts.values.map(\.username).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    public func accountCount() -> Int {
        accounts.count
    }
}
