/// A `LastActivityStore` in memory, for tests and for servers that need
/// nothing to survive a restart.
public typealias InMemoryLastActivityStore = InMemoryPerAccountStore<LastLogout>

extension InMemoryPerAccountStore: LastActivityStore where Value == LastLogout {
    public func lastLogout(of username: String) -> LastLogout? {
        values[username]
    }

    public func setLastLogout(_ logout: LastLogout, of username: String) throws {
        try values.set(logout, for: username)
    }
}
