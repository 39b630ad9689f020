import Foundation

/// One FAST token the server issued (XEP-0484), as stored: never the token
/// itself, only what the server derives it from and what it is bound to.
public struct FastTokenRecord: Sendable, Hashable {
    /// The SASL2 `<user-agent id>` the token is bound to.
    public var userAgent: String
    /// The mechanism the token is bound to, such as `HT-SHA-256-NONE`.
    public var mechanism: String
    /// The random bytes the server derives the token from with a key kept
    /// outside the store.
    public var nonce: [UInt8]
    /// When the token stops being accepted. The stores keep it to the
    /// nearest millisecond.
    public var expiry: Date

    /// Creates a record.
    public init(userAgent: String, mechanism: String, nonce: [UInt8], expiry: Date) {
        self.userAgent = userAgent
        self.mechanism = mechanism
        self.nonce = nonce
        self.expiry = expiry
    }
}

/// The FAST tokens of the server's users (XEP-0484: Fast Authentication
/// Streamlining Tokens), two slots per user agent as the XEP's
/// implementation notes suggest: the `new` token, last issued and not yet
/// used, and the `current` one, last used. A client that missed the new
/// token can still log in with the current one.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts and user agents the client's ids;
/// the store compares both byte for byte. An unknown username reads as an
/// account without tokens; `issue(_:to:maxClients:)` throws
/// `UnknownAccountError` for it. Replacing the account's credentials or
/// deleting the account deletes its tokens.
public protocol FastTokenStore: AnyObject {
    /// Puts `record` in the new slot of `username` and `record.userAgent`,
    /// replacing the token there, which was never used.
    ///
    /// Then keeps at most `maxClients` user agents for the account: while
    /// there are more, forgets the other user agent whose last token
    /// expires first (the lowest user agent by UTF-8 bytes among equals).
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`,
    ///   storing nothing.
    func issue(_ record: FastTokenRecord, to username: String, maxClients: Int) throws

    /// The tokens of `username` and `userAgent` still valid at `now` (their
    /// expiry after it): the new one first, then the current one.
    func tokens(of username: String, userAgent: String, at now: Date) throws -> [FastTokenRecord]

    /// Records that the token with `nonce` was just used: the new token
    /// becomes the current one, dropping the old current one; using the
    /// current token, or a nonce neither slot holds, changes nothing.
    func used(nonce: [UInt8], of username: String, userAgent: String) throws

    /// Forgets the tokens of `username` and `userAgent`, as a client's
    /// `<fast invalidate='true'/>` asks.
    func invalidate(_ username: String, userAgent: String) throws

    /// Forgets every token of `username`.
    func invalidateAll(of username: String) throws

    /// Deletes the tokens of every account expired at `now`.
    ///
    /// - Returns: How many it deleted.
    func removeExpired(at now: Date) throws -> Int
}

extension Date {
    /// Milliseconds since 1970-01-01 00:00 UTC, to the nearest: how the
    /// FAST token stores keep and compare expiry times.
    var fastTokenMilliseconds: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }

    /// The date `milliseconds` after 1970-01-01 00:00 UTC.
    init(fastTokenMilliseconds milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
