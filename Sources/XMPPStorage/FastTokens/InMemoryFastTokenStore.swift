import Foundation

/// A `FastTokenStore` in a dictionary per account, for tests and for
/// servers that need nothing to survive a restart. `Stores(accounts:)`
/// deletes an account's tokens when the account is deleted or its
/// credentials are replaced.
public final class InMemoryFastTokenStore: FastTokenStore, AccountScopedStore {
    /// The two slots of one user agent; at least one holds a token.
    private struct Slots {
        var new: FastTokenRecord?
        var current: FastTokenRecord?

        /// The tokens, the new one first.
        var tokens: [FastTokenRecord] { [new, current].compactMap { $0 } }

        /// When the token that lasts longer expires.
        var lastExpiry: Date { tokens.map(\.expiry).max()! }

        /// Empties the slots whose token has expired at `now`.
        ///
        /// - Returns: How many it emptied.
        mutating func removeExpired(at now: Date) -> Int {
            let count = tokens.count
            if new?.isValid(at: now) == false { new = nil }
            if current?.isValid(at: now) == false { current = nil }
            return count - tokens.count
        }
    }

    /// Each account's user agents, keyed by their UTF-8 bytes.
    private var clients: PerAccount<[[UInt8]: Slots]>

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        clients = PerAccount(accounts: accounts)
    }

    public func issue(_ record: FastTokenRecord, to username: String, maxClients: Int) throws {
        precondition(maxClients > 0, "a FAST token needs room for its own user agent")
        let userAgent = Array(record.userAgent.utf8)
        var stored = record
        stored.expiry = Date(fastTokenMilliseconds: record.expiry.fastTokenMilliseconds)
        var slots = clients[username] ?? [:]
        slots[userAgent, default: Slots()].new = stored
        while slots.count > maxClients {
            let first = slots.filter { $0.key != userAgent }.min { a, b in
                a.value.lastExpiry != b.value.lastExpiry
                    ? a.value.lastExpiry < b.value.lastExpiry : a.key.lexicographicallyPrecedes(b.key)
            }!
            slots[first.key] = nil
        }
        try clients.set(slots, for: username)
    }

    public func tokens(of username: String, userAgent: String, at now: Date) -> [FastTokenRecord] {
        guard let slots = clients[username]?[Array(userAgent.utf8)] else { return [] }
        return slots.tokens.filter { $0.isValid(at: now) }
    }

    public func used(nonce: [UInt8], of username: String, userAgent: String) throws {
        let key = Array(userAgent.utf8)
        guard var slots = clients[username], let new = slots[key]?.new, new.nonce == nonce else { return }
        slots[key] = Slots(new: nil, current: new)
        try clients.set(slots, for: username)
    }

    public func invalidate(_ username: String, userAgent: String) throws {
        guard var slots = clients[username] else { return }
        slots[Array(userAgent.utf8)] = nil
        try clients.set(slots, for: username)
    }

    public func invalidateAll(of username: String) {
        clients.removeAll(of: username)
    }

    public func removeExpired(at now: Date) -> Int {
        var removed = 0
        clients.updateEach { slots in
            for (userAgent, var pair) in slots {
                removed += pair.removeExpired(at: now)
                slots[userAgent] = pair.tokens.isEmpty ? nil : pair
            }
        }
        return removed
    }

    func removeAll(of username: String) {
        clients.removeAll(of: username)
    }
}

extension FastTokenRecord {
    /// Whether the token is still accepted at `now`, to the millisecond.
    fileprivate func isValid(at now: Date) -> Bool {
        expiry.fastTokenMilliseconds > now.fastTokenMilliseconds
    }
}
