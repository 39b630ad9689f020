/// A `VCardStore` in memory, for tests and for servers that need nothing
/// to survive a restart.
public typealias InMemoryVCardStore = InMemoryPerAccountStore<String>

extension InMemoryPerAccountStore: VCardStore where Value == String {
    public func vCard(of username: String) -> String? {
        values[username]
    }

    public func setVCard(_ xml: String, of username: String) throws {
        try values.set(xml, for: username)
    }
}
