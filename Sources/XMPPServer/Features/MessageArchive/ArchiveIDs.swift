import Synchronization
import XMPPCore

/// The archive ids clients see (XEP-0313 `<result id/>`, XEP-0359
/// `<stanza-id id/>`): each item's sequence number under a secret 64-bit
/// permutation, in 13 characters of lowercase base32.
///
/// XEP-0359's security considerations require ids from which nothing can
/// be inferred, "e.g. the size of the message archive", which a plain
/// counter would give away; random ids would need an index from id to
/// item, updated on every write. A keyed permutation is both: opaque to
/// clients, and turned back into the sequence without a lookup. The key
/// comes from the server's stored secret, so ids stay valid across
/// restarts.
///
/// Shared by every loop; the key is set once, at start.
final class ArchiveIDs: Sendable {
    private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
    /// The length of an id: 64 bits in 5-bit characters.
    static let length = 13

    private let permutation = Mutex<KeyedPermutation?>(nil)
    /// What the key is derived for, so that each kind of archive has its own.
    private let purpose: String

    /// Ids of the archives `purpose` names; the users' archives keep the
    /// default.
    init(purpose: String = "swiftlet archive ids") {
        self.purpose = purpose
    }

    /// Derives the key from the server's secret.
    func configure(secret: [UInt8]) {
        let key = Array(HashFunction.sha256.hmac(key: secret, message: Array(purpose.utf8)).prefix(16))
        permutation.withLock { $0 = KeyedPermutation(key: key) }
    }

    private var current: KeyedPermutation {
        guard let permutation = permutation.withLock({ $0 }) else {
            preconditionFailure("archive ids used before the server started")
        }
        return permutation
    }

    /// The id of the item with `sequence`.
    func id(for sequence: Int64) -> String {
        precondition(sequence > 0, "archive sequences are positive")
        let value = current.apply(UInt64(sequence))
        // Written straight into the string's storage: one id per routed
        // message, so no intermediate array.
        let alphabet = Self.alphabet
        return String(unsafeUninitializedCapacity: Self.length) { characters in
            for index in 0..<Self.length {
                characters[index] = alphabet[Int(truncatingIfNeeded: value >> UInt64(5 * (Self.length - 1 - index))) & 31]
            }
            return Self.length
        }
    }

    /// The sequence `id` stands for, or `nil` when no item can have it
    /// (wrong length or characters, or a value no sequence maps to).
    func sequence(of id: String) -> Int64? {
        let characters = Array(id.utf8)
        guard characters.count == Self.length else { return nil }
        var value: UInt64 = 0
        for (index, character) in characters.enumerated() {
            guard let digit = Self.alphabet.firstIndex(of: character) else { return nil }
            // The first character carries only the top 4 of 64 bits.
            if index == 0, digit >= 16 { return nil }
            value = value << 5 | UInt64(digit)
        }
        let sequence = current.invert(value)
        guard sequence > 0, sequence <= UInt64(Int64.max) else { return nil }
        return Int64(sequence)
    }
}
