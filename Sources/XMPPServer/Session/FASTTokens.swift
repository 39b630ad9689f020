import Foundation
import XMPPCore
import XMPPStorage

/// XEP-0484 tokens on the server: issued after a login, checked by the
/// Hashed Token mechanisms, rotated before they expire.
///
/// The database holds no token: each token is an HMAC, under a key
/// derived from the server's secret file, of a random nonce the database
/// keeps with the token's client, mechanism and expiry. A copy of the
/// database alone logs no one in.
///
/// `issue` and `check` run on the storage thread.
struct FASTTokens: Sendable {
    /// The bytes of randomness behind each token.
    static let nonceByteCount = 16

    private let key: [UInt8]
    /// How long a token is valid; `.zero` when FAST is off.
    let lifetime: Duration
    private let maxClients: Int

    init(serverSecret: [UInt8], lifetime: Duration, maxClients: Int) {
        key = HashFunction.sha256.hmac(key: serverSecret, message: Array("swiftlet FAST token key".utf8))
        self.lifetime = lifetime
        self.maxClients = maxClients
    }

    /// A token handed to a client, as `<token/>` carries it.
    struct Grant: Sendable {
        var token: String
        var expiry: Date

        /// `<token xmlns='urn:xmpp:fast:0' token expiry/>` (§3.3).
        var element: Element {
            let milliseconds = Int((expiry.timeIntervalSince1970 * 1000).rounded(.down))
            return Element(
                "token", namespace: NS.fast,
                attributes: ["expiry": DateTimeProfile.string(millisecondsSince1970: milliseconds), "token": token])
        }
    }

    /// What checking a FAST login found.
    enum Verdict: Sendable {
        /// The proof matched `token`, made from `nonce`; `rotate` when it
        /// is past half its life.
        case accepted(token: [UInt8], nonce: [UInt8], rotate: Bool)
        /// The client holds tokens, but the proof matches none of them.
        case wrong
        /// The client holds no valid token: expired, invalidated or never issued.
        case none
    }

    /// The token for a stored nonce: base64url, without padding.
    func token(for nonce: [UInt8]) -> String {
        Base64.encodeURLSafe(HashFunction.sha256.hmac(key: key, message: nonce))
    }

    /// Issues a token for `mechanism` to the client `userAgent` of
    /// `username`, into the slot for the next token (§5.1).
    func issue(
        _ mechanism: FASTMechanism, to username: String, userAgent: String, now: Date, in stores: Stores
    ) throws -> Grant {
        let nonce = Crypto.randomBytes(count: Self.nonceByteCount)
        let expiry = now.addingTimeInterval(lifetime.seconds)
        try stores.fastTokens.issue(
            FastTokenRecord(userAgent: userAgent, mechanism: mechanism.rawValue, nonce: nonce, expiry: expiry),
            to: username, maxClients: maxClients)
        return Grant(token: token(for: nonce), expiry: expiry)
    }

    /// Checks a Hashed Token proof against the client's tokens for that
    /// mechanism (XEP-0484 binds a token to its mechanism), in constant
    /// time each; a match is recorded as used, or forgotten when the login
    /// invalidates it (§3.5).
    func check(
        _ proof: [UInt8], _ mechanism: FASTMechanism, channelBinding: [UInt8], username: String,
        userAgent: String, invalidate: Bool, now: Date, in stores: Stores
    ) throws -> Verdict {
        let records = try stores.fastTokens.tokens(of: username, userAgent: userAgent, at: now)
        guard !records.isEmpty else { return .none }
        for record in records where record.mechanism == mechanism.rawValue {
            let token = Array(self.token(for: record.nonce).utf8)
            guard HashedToken.verify(proof, mechanism, token: token, channelBinding: channelBinding) else { continue }
            if invalidate {
                try stores.fastTokens.invalidate(username, userAgent: userAgent)
            } else {
                try stores.fastTokens.used(nonce: record.nonce, of: username, userAgent: userAgent)
            }
            let rotate = record.expiry.timeIntervalSince(now) < lifetime.seconds / 2
            return .accepted(token: token, nonce: record.nonce, rotate: rotate)
        }
        return .wrong
    }
}
