/// A `VCardStore` in a dictionary, for tests and for servers that need
/// nothing to survive a restart. `Stores(accounts:)` deletes a vCard with
/// its account.
public final class InMemoryVCardStore: VCardStore, AccountScopedStore {
    private var vCards: PerAccount<String>

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        vCards = PerAccount(accounts: accounts)
    }

    public func vCard(of username: String) -> String? {
        vCards[username]
    }

    public func setVCard(_ xml: String, of username: String) throws {
        try vCards.set(xml, for: username)
    }

    func removeAll(of username: String) {
        vCards.removeAll(of: username)
    }
}
