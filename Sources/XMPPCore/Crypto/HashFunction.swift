import COpenSSL

/// A cryptographic hash function, with the constructions SASL builds on it:
/// plain digests, HMAC and PBKDF2.
///
/// SCRAM (RFC 5802 §2.2) is defined over any hash; XMPP uses SHA-1
/// (`SCRAM-SHA-1`, RFC 5802) and SHA-256 (`SCRAM-SHA-256`, RFC 7677). The raw
/// values are the IANA "Hash Function Textual Names" (RFC 4572 §5), stable
/// enough to store next to credentials.
public enum HashFunction: String, Sendable, Hashable, CaseIterable {
    /// SHA-1 (FIPS 180-4): weak for collisions, still sound inside HMAC,
    /// and the only SCRAM variant older clients such as XMPPFramework speak.
    case sha1 = "sha-1"
    /// SHA-256 (FIPS 180-4).
    case sha256 = "sha-256"

    /// The length of a digest (and of an HMAC) in bytes: 20 for SHA-1, 32 for SHA-256.
    public var outputByteCount: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        }
    }

    /// OpenSSL's static description of the digest; never freed.
    private var messageDigest: OpaquePointer {
        switch self {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        }
    }

    /// Returns the digest of `message`.
    ///
    /// The corresponding C function is `EVP_Digest`.
    public func hash(_ message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let status = withNonNullBytes(message) { input, count in
            output.withUnsafeMutableBufferPointer {
                EVP_Digest(input, count, $0.baseAddress, nil, messageDigest, nil)
            }
        }
        // Fails only when OpenSSL cannot allocate; there is nothing to recover.
        precondition(status == 1, "EVP_Digest failed")
        return output
    }

    /// Returns the HMAC (RFC 2104) of `message` under `key`.
    ///
    /// The corresponding C function is `HMAC`.
    public func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(key.count <= Int(Int32.max), "HMAC key too long")
        var output = [UInt8](repeating: 0, count: outputByteCount)
        var length: UInt32 = 0
        let result = withNonNullBytes(key) { keyBytes, keyCount in
            withNonNullBytes(message) { messageBytes, messageCount in
                output.withUnsafeMutableBufferPointer {
                    HMAC(
                        messageDigest, keyBytes, Int32(keyCount), messageBytes, messageCount,
                        $0.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && Int(length) == outputByteCount, "HMAC failed")
        return output
    }

    /// Derives a key from a password with PBKDF2 (RFC 8018 §5.2), using HMAC
    /// over this hash as the pseudorandom function.
    ///
    /// SCRAM's `Hi(str, salt, i)` (RFC 5802 §2.2) is exactly PBKDF2 with an
    /// output one digest long, the default here.
    ///
    /// - Parameters:
    ///   - password: The password bytes, already prepared (for SCRAM: the
    ///     UTF-8 of the PRECIS OpaqueString form).
    ///   - salt: The salt.
    ///   - iterations: The iteration count, at least 1.
    ///   - outputByteCount: The length of the derived key; one digest by default.
    ///
    /// The corresponding C function is `PKCS5_PBKDF2_HMAC`.
    public func pbkdf2(
        password: [UInt8], salt: [UInt8], iterations: Int, outputByteCount: Int? = nil
    ) -> [UInt8] {
        let count = outputByteCount ?? self.outputByteCount
        precondition((1...Int(Int32.max)).contains(iterations), "PBKDF2 iterations out of range")
        precondition((1...Int(Int32.max)).contains(count), "PBKDF2 output length out of range")
        precondition(password.count <= Int(Int32.max) && salt.count <= Int(Int32.max))
        var output = [UInt8](repeating: 0, count: count)
        let status = withNonNullBytes(password) { passwordBytes, passwordCount in
            withNonNullBytes(salt) { saltBytes, saltCount in
                passwordBytes.withMemoryRebound(to: CChar.self, capacity: max(passwordCount, 1)) {
                    passwordChars in
                    output.withUnsafeMutableBufferPointer {
                        PKCS5_PBKDF2_HMAC(
                            passwordChars, Int32(passwordCount), saltBytes, Int32(saltCount),
                            Int32(iterations), messageDigest, Int32(count), $0.baseAddress)
                    }
                }
            }
        }
        precondition(status == 1, "PKCS5_PBKDF2_HMAC failed")
        return output
    }
}
