/// The keys that seal TLS session tickets (RFC 8446 §4.6.1, RFC 5077 §4),
/// rotated so that a key stolen from memory opens only recent tickets.
///
/// The newest key seals every new ticket for `rotation`, then gives way to
/// a fresh one. An older key still opens the tickets it sealed until the
/// last of them has expired (`rotation + ticketLifetime` after the key was
/// made) and is then forgotten. A ticket opened with a key that no longer
/// seals is replaced by one sealed with the newest key, so a client that
/// reconnects often keeps resuming.
///
/// Keys live in memory only: after a restart every client makes one full
/// handshake, which is cheap next to keeping keys on disk safe.
struct SessionTicketKeyRing {
    /// One ticket key: the name written in clear at the start of each
    /// ticket it seals, and the secrets that encrypt and authenticate it.
    struct Key: Sendable {
        /// 16 random bytes that tell which key sealed a ticket.
        let name: [UInt8]
        /// The AES-256-CBC key.
        let cipherKey: [UInt8]
        /// The HMAC-SHA-256 key.
        let macKey: [UInt8]
        /// When the key was made; it seals tickets for `rotation` from then.
        let created: ContinuousClock.Instant
    }

    /// The key name's length, fixed by OpenSSL's ticket format.
    static let nameByteCount = 16
    /// AES-256 and HMAC-SHA-256 both take 32-byte keys here.
    static let secretByteCount = 32

    /// How long one key seals new tickets.
    let rotation: Duration
    /// The longest a ticket stays valid (the session timeout the server
    /// announces as the ticket lifetime).
    let ticketLifetime: Duration
    /// The keys still able to open a ticket, newest first.
    private(set) var keys: [Key] = []

    /// Creates an empty ring; the first ticket makes the first key.
    init(rotation: Duration, ticketLifetime: Duration) {
        precondition(rotation > .zero && ticketLifetime > .zero, "ticket key periods must be positive")
        self.rotation = rotation
        self.ticketLifetime = ticketLifetime
    }

    /// The key to seal a new ticket with at `now`, making a new one when
    /// the newest is older than `rotation`.
    mutating func sealingKey(at now: ContinuousClock.Instant) -> Key {
        forgetExpiredKeys(at: now)
        if let newest = keys.first, newest.created.duration(to: now) < rotation { return newest }
        let key = Key(
            name: Crypto.randomBytes(count: Self.nameByteCount),
            cipherKey: Crypto.randomBytes(count: Self.secretByteCount),
            macKey: Crypto.randomBytes(count: Self.secretByteCount), created: now)
        keys.insert(key, at: 0)
        return key
    }

    /// The key named `name` if it may still open a ticket at `now`, and
    /// whether the ticket should be replaced because the key no longer seals
    /// new ones; `nil` for an unknown or forgotten key, which means a full
    /// handshake.
    mutating func openingKey(
        named name: some Sequence<UInt8>, at now: ContinuousClock.Instant
    ) -> (key: Key, renew: Bool)? {
        forgetExpiredKeys(at: now)
        guard let index = keys.firstIndex(where: { $0.name.elementsEqual(name) }) else { return nil }
        let key = keys[index]
        return (key, index > 0 || key.created.duration(to: now) >= rotation)
    }

    /// Drops the keys whose every ticket has expired.
    private mutating func forgetExpiredKeys(at now: ContinuousClock.Instant) {
        keys.removeAll { $0.created.duration(to: now) >= rotation + ticketLifetime }
    }
}
