import COpenSSL
import Synchronization

/// The session ticket keys of this process, shared by every server
/// ``TLSContext``: a ticket issued on a STARTTLS connection resumes on the
/// direct TLS listener too (XEP-0368), and on any context built later.
///
/// Left to itself, OpenSSL gives each context a random ticket key for its
/// whole life; here keys rotate as ``SessionTicketKeyRing`` describes.
///
/// `@unchecked Sendable`: the ring is behind a `Mutex`, and `cipher` is a
/// fetched algorithm that is never changed or freed, which OpenSSL lets
/// several threads use at once (openssl-threads(7)).
final class SessionTicketKeys: @unchecked Sendable {
    /// A new key every hour; tickets live 2 hours (OpenSSL's default session
    /// timeout), so a key is forgotten at most 3 hours after it was made.
    static let shared = SessionTicketKeys(
        ring: SessionTicketKeyRing(rotation: .seconds(3600), ticketLifetime: .seconds(7200)))

    /// OSSL_MAC_PARAM_KEY and OSSL_MAC_PARAM_DIGEST, and the digest's name:
    /// static strings, as an `OSSL_PARAM` keeps the pointers it is given.
    private static let macKeyParameter: StaticString = "key"
    private static let macDigestParameter: StaticString = "digest"
    private static let macDigest: StaticString = "SHA256"

    private let ring: Mutex<SessionTicketKeyRing>
    /// The ticket lifetime the contexts announce, in seconds.
    private let ticketLifetimeSeconds: Int
    /// AES-256-CBC, OpenSSL's own ticket cipher, fetched once rather than
    /// for every ticket.
    private let cipher: OpaquePointer

    private init(ring: SessionTicketKeyRing) {
        ticketLifetimeSeconds = Int(ring.ticketLifetime.components.seconds)
        self.ring = Mutex(ring)
        guard let cipher = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil) else {
            fatalError("OpenSSL has no AES-256-CBC")
        }
        self.cipher = cipher
    }

    /// Makes the server context `context` seal and open tickets with the
    /// process's keys, announce their lifetime, and issue one ticket per
    /// full handshake.
    ///
    /// One ticket, not OpenSSL's default two: an XMPP client holds one
    /// connection and replaces its ticket at each resumption, so a second
    /// ticket would only cost an encryption and 200 bytes per login.
    ///
    /// The corresponding C functions are `SSL_CTX_set_tlsext_ticket_key_evp_cb`,
    /// `SSL_CTX_set_timeout` and `SSL_CTX_set_num_tickets`.
    static func install(on context: OpaquePointer) -> Bool {
        _ = SSL_CTX_set_timeout(context, shared.ticketLifetimeSeconds)
        return SSL_CTX_set_num_tickets(context, 1) == 1
            && SSL_CTX_set_tlsext_ticket_key_evp_cb(context) { _, name, iv, cipherContext, macContext, sealing in
                guard let name, let iv, let cipherContext, let macContext else { return -1 }
                return sealing == 1
                    ? SessionTicketKeys.shared.seal(name: name, iv: iv, cipherContext, macContext)
                    : SessionTicketKeys.shared.open(name: name, iv: iv, cipherContext, macContext)
            } == 1
    }

    /// Prepares a new ticket: writes the sealing key's name and a random IV,
    /// and keys the cipher and the MAC. Returns 1, or -1 on failure.
    private func seal(
        name: UnsafeMutablePointer<UInt8>, iv: UnsafeMutablePointer<UInt8>,
        _ cipherContext: OpaquePointer, _ macContext: OpaquePointer
    ) -> Int32 {
        let key = ring.withLock { $0.sealingKey(at: .now) }
        name.update(from: key.name, count: SessionTicketKeyRing.nameByteCount)
        guard RAND_bytes(iv, EVP_CIPHER_get_iv_length(cipher)) == 1,
            EVP_EncryptInit_ex2(cipherContext, cipher, key.cipherKey, iv, nil) == 1,
            setMACKey(key.macKey, on: macContext)
        else { return -1 }
        return 1
    }

    /// Prepares to open a ticket sealed by the key `name`: 0 when that key
    /// is unknown or forgotten (a full handshake follows), 1 when it is the
    /// sealing key, 2 when the ticket should be replaced, -1 on failure.
    private func open(
        name: UnsafeMutablePointer<UInt8>, iv: UnsafeMutablePointer<UInt8>,
        _ cipherContext: OpaquePointer, _ macContext: OpaquePointer
    ) -> Int32 {
        let keyName = UnsafeBufferPointer(start: name, count: SessionTicketKeyRing.nameByteCount)
        guard let opening = ring.withLock({ $0.openingKey(named: keyName, at: .now) }) else {
            return 0
        }
        guard EVP_DecryptInit_ex2(cipherContext, cipher, opening.key.cipherKey, iv, nil) == 1,
            setMACKey(opening.key.macKey, on: macContext)
        else { return -1 }
        return opening.renew ? 2 : 1
    }

    /// Keys `macContext` (HMAC) with `key` over SHA-256.
    ///
    /// The corresponding C function is `EVP_MAC_CTX_set_params`.
    private func setMACKey(_ key: [UInt8], on macContext: OpaquePointer) -> Bool {
        key.withUnsafeBytes { secret in
            var parameters = [
                OSSL_PARAM_construct_octet_string(
                    Self.cString(Self.macKeyParameter), UnsafeMutableRawPointer(mutating: secret.baseAddress),
                    secret.count),
                OSSL_PARAM_construct_utf8_string(
                    Self.cString(Self.macDigestParameter),
                    UnsafeMutablePointer(mutating: Self.cString(Self.macDigest)), 0),
                OSSL_PARAM_construct_end(),
            ]
            return EVP_MAC_CTX_set_params(macContext, &parameters) == 1
        }
    }

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
