/// A `PrivateXMLStore` in memory, for tests and for servers that need
/// nothing to survive a restart. `Stores(accounts:)` deletes an account's
/// elements with it.
public final class InMemoryPrivateXMLStore: PrivateXMLStore, AccountScopedStore {
    /// An element's qualified name, as the bytes SQLite would compare.
    private struct QualifiedName: Hashable {
        var namespace: [UInt8]
        var name: [UInt8]

        init(_ namespace: String, _ name: String) {
            self.namespace = Array(namespace.utf8)
            self.name = Array(name.utf8)
        }
    }

    private var elements: PerAccount<[QualifiedName: String]>

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        elements = PerAccount(accounts: accounts)
    }

    public func element(namespace: String, name: String, of username: String) -> String? {
        elements[username]?[QualifiedName(namespace, name)]
    }

    public func setElement(_ xml: String, namespace: String, name: String, of username: String) throws {
        var stored = elements[username] ?? [:]
        stored[QualifiedName(namespace, name)] = xml
        try elements.set(stored, for: username)
    }

    public func removeElement(namespace: String, name: String, of username: String) throws {
        guard var stored = elements[username] else { return }
        stored[QualifiedName(namespace, name)] = nil
        try elements.set(stored, for: username)
    }

    public func elementCount(of username: String) -> Int {
        elements[username]?.count ?? 0
    }

    func removeAll(of username: String) {
        elements.removeAll(of: username)
    }
}
