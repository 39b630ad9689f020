import COpenSSL

/// Signs with ECDSA over P-256 and SHA-256 (JWS `ES256`, RFC 7518 §3.4):
/// what Apple's push service asks of a provider token, signed with the
/// developer's `.p8` key.
///
/// The key is kept by OpenSSL for the signer's lifetime. Signing is
/// thread-safe (OpenSSL's key objects may be shared between threads for
/// signing).
public final class ES256Signer: @unchecked Sendable {
    private let key: OpaquePointer

    /// Reads an unencrypted P-256 private key in PEM (`-----BEGIN PRIVATE
    /// KEY-----`, PKCS #8, as Apple's `.p8` files hold it, or SEC 1).
    /// - Throws: `TLSError` (`.invalidConfiguration`) for anything else.
    public init(privateKeyPEM pem: String) throws(TLSError) {
        let bytes = Array(pem.utf8)
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            // An encrypted key would make OpenSSL prompt; refuse instead.
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let parsed else { throw TLSError.drainingQueue(.invalidConfiguration, "no unencrypted private key found") }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_EC, EVP_PKEY_get_bits(parsed) == 256 else {
            EVP_PKEY_free(parsed)
            throw TLSError(.invalidConfiguration, "the key is not an elliptic curve P-256 key")
        }
        key = parsed
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// The JWS signature of `message`: r and s, 32 bytes each (RFC 7518
    /// §3.4), not OpenSSL's DER.
    public func sign(_ message: [UInt8]) throws(TLSError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw TLSError.drainingQueue(.invalidConfiguration, "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot sign with the key")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot sign")
        }
        var der = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &der, &length, message, message.count) == 1 else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot sign")
        }
        return try Self.rawSignature(fromDER: Array(der.prefix(length)))
    }

    /// r‖s from an ASN.1 `ECDSA-Sig-Value`.
    private static func rawSignature(fromDER der: [UInt8]) throws(TLSError) -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw TLSError.drainingQueue(.invalidConfiguration, "unreadable signature") }
        defer { ECDSA_SIG_free(signature) }
        var raw = [UInt8](repeating: 0, count: 64)
        guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature),
            BN_bn2binpad(r, &raw, 32) == 32,
            raw.withUnsafeMutableBufferPointer({ BN_bn2binpad(s, $0.baseAddress! + 32, 32) }) == 32
        else { throw TLSError(.invalidConfiguration, "signature out of range") }
        return raw
    }
}
