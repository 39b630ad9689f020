import XMPPCore
import XMPPNet

/// The admin page's logins, in memory only (a restart logs everyone out),
/// at most `capacity` at once.
///
/// A login is known by a cookie of 32 random bytes. The table keys it by
/// the cookie's SHA-256, so that looking a cookie up takes no time that
/// depends on how much of a real one it matches, and the cookies
/// themselves are not kept. Each login has its own token for forms
/// (CSRF), compared in constant time.
///
/// A login ends after `idleLifetime` without a request, `maxLifetime`
/// after it began, on logout, or when its account's sessions are revoked
/// (password changed, account deleted: `SessionRegistry.revocationCount`).
/// When the table is full, a new login replaces the one used least
/// recently.
///
/// Confined to the server's loop; times are the loop's.
final class AdminWebSessions {
    /// One logged-in admin.
    struct Login {
        /// The account's username.
        let username: String
        /// The token every form of this login carries (base64url).
        let formToken: String
        let started: ContinuousClock.Instant
        var lastUsed: ContinuousClock.Instant
        /// The account's revocation count at login: a higher one ends it.
        let revocations: Int
    }

    /// How long a login lasts without a request: 1 hour.
    static let idleLifetime = Duration.seconds(3600)
    /// How long a login lasts at most: 12 hours.
    static let maxLifetime = Duration.seconds(12 * 3600)
    /// The most logins at once: 16.
    static let capacity = 16
    /// The cookie's name.
    static let cookieName = "swiftlet_admin"

    private let registry: SessionRegistry
    private var logins: [[UInt8]: Login] = [:]

    /// The logins of the admins of `registry`'s accounts.
    init(registry: SessionRegistry) {
        self.registry = registry
    }

    /// How many logins are live or not yet found expired.
    var count: Int { logins.count }

    /// Starts a login for `username`.
    /// - Returns: The cookie's value (32 random bytes, base64url) and the
    ///   login.
    func start(_ username: String, now: ContinuousClock.Instant) -> (cookie: String, login: Login) {
        dropExpired(now: now)
        if logins.count >= Self.capacity, let oldest = logins.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            logins[oldest.key] = nil
        }
        let cookie = Base64.encodeURLSafe(Crypto.randomBytes(count: 32))
        let login = Login(
            username: username, formToken: Base64.encodeURLSafe(Crypto.randomBytes(count: 32)), started: now,
            lastUsed: now, revocations: registry.revocationCount(of: username))
        logins[Self.key(cookie)] = login
        return (cookie, login)
    }

    /// The live login whose cookie is `cookie`, marked used; nil (and the
    /// login forgotten) when it expired or was revoked.
    func login(_ cookie: String, now: ContinuousClock.Instant) -> Login? {
        let key = Self.key(cookie)
        guard var login = logins[key] else { return nil }
        guard isLive(login, now: now) else {
            logins[key] = nil
            return nil
        }
        login.lastUsed = now
        logins[key] = login
        return login
    }

    /// Ends the login of `cookie`, if any.
    func end(_ cookie: String) {
        logins[Self.key(cookie)] = nil
    }

    /// Whether `token` is `login`'s form token, compared in constant time.
    static func isFormToken(_ token: String, of login: Login) -> Bool {
        Crypto.constantTimeEquals(Array(token.utf8), Array(login.formToken.utf8))
    }

    private func isLive(_ login: Login, now: ContinuousClock.Instant) -> Bool {
        login.lastUsed.duration(to: now) < Self.idleLifetime && login.started.duration(to: now) < Self.maxLifetime
            && registry.revocationCount(of: login.username) == login.revocations
    }

    private func dropExpired(now: ContinuousClock.Instant) {
        logins = logins.filter { isLive($0.value, now: now) }
    }

    private static func key(_ cookie: String) -> [UInt8] {
        HashFunction.sha256.hash(Array(cookie.utf8))
    }
}
