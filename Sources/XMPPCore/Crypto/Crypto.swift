import COpenSSL

/// Randomness and comparison for secrets, from OpenSSL.
public enum Crypto {
    /// Returns `count` bytes from OpenSSL's cryptographically secure generator,
    /// for nonces, salts and keys.
    ///
    /// OpenSSL seeds itself from the operating system. If it cannot, every
    /// nonce and salt from then on would be predictable, so this stops the
    /// process rather than carry on.
    ///
    /// The corresponding C function is `RAND_bytes`.
    public static func randomBytes(count: Int) -> [UInt8] {
        precondition((0...Int(Int32.max)).contains(count), "random byte count out of range")
        var output = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return output }
        let status = output.withUnsafeMutableBufferPointer {
            RAND_bytes($0.baseAddress, Int32(count))
        }
        precondition(status == 1, "RAND_bytes failed: no secure randomness available")
        return output
    }

    /// Whether two byte strings are equal, taking time that depends only on
    /// their lengths, never on where they first differ.
    ///
    /// Use it for proofs, signatures and keys so that an attacker cannot learn
    /// a secret one byte at a time from response times (RFC 5802 §9). Lengths
    /// are public (digest sizes), so unequal lengths return early.
    ///
    /// The corresponding C function is `CRYPTO_memcmp`.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        guard !lhs.isEmpty else { return true }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, lhs.count) == 0
            }
        }
    }
}

/// Calls `body` with a pointer to `bytes` and their count; the pointer is
/// never null, even for an empty array, because some OpenSSL functions read
/// a null pointer as "argument missing" whatever the length says.
func withNonNullBytes<Result>(
    _ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> Result
) -> Result {
    if bytes.isEmpty {
        return withUnsafePointer(to: UInt8(0)) { body($0, 0) }
    }
    return bytes.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
}
