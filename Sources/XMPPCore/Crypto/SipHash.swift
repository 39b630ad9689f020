/// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
/// PRF", 2012): a keyed pseudorandom function from a 128-bit key and a
/// message to 64 bits, fast on short inputs.
///
/// Not for hashing passwords or signing messages; for turning small
/// values into unpredictable ones under a secret key, as `KeyedPermutation`
/// does.
public struct SipHash: Sendable, Hashable {
    private let k0: UInt64
    private let k1: UInt64

    /// A function under the 16-byte `key`, read as two little-endian words.
    public init(key: [UInt8]) {
        precondition(key.count == 16, "SipHash takes a 16-byte key")
        k0 = Self.word(key, at: 0)
        k1 = Self.word(key, at: 8)
    }

    /// SipHash-2-4 of `message`.
    public func hash(_ message: [UInt8]) -> UInt64 {
        var state = State(k0, k1)
        let whole = message.count / 8 * 8
        for offset in stride(from: 0, to: whole, by: 8) { state.compress(Self.word(message, at: offset)) }
        // The last block: the remaining bytes, and the length in the top byte.
        var last = UInt64(truncatingIfNeeded: message.count) << 56
        for (shift, byte) in message[whole...].enumerated() { last |= UInt64(byte) << (8 * UInt64(shift)) }
        state.compress(last)
        return state.finish()
    }

    /// SipHash-2-4 of the eight little-endian bytes of `value`, without
    /// building them.
    public func hash(_ value: UInt64) -> UInt64 {
        var state = State(k0, k1)
        state.compress(value)
        state.compress(8 << 56)
        return state.finish()
    }

    /// The four words of the internal state.
    private struct State {
        var v0: UInt64, v1: UInt64, v2: UInt64, v3: UInt64

        init(_ k0: UInt64, _ k1: UInt64) {
            v0 = 0x736f_6d65_7073_6575 ^ k0
            v1 = 0x646f_7261_6e64_6f6d ^ k1
            v2 = 0x6c79_6765_6e65_7261 ^ k0
            v3 = 0x7465_6462_7974_6573 ^ k1
        }

        mutating func round() {
            v0 = v0 &+ v1; v1 = rotate(v1, 13); v1 ^= v0; v0 = rotate(v0, 32)
            v2 = v2 &+ v3; v3 = rotate(v3, 16); v3 ^= v2
            v0 = v0 &+ v3; v3 = rotate(v3, 21); v3 ^= v0
            v2 = v2 &+ v1; v1 = rotate(v1, 17); v1 ^= v2; v2 = rotate(v2, 32)
        }

        /// Two rounds per message word (the "2" of SipHash-2-4).
        mutating func compress(_ word: UInt64) {
            v3 ^= word
            round()
            round()
            v0 ^= word
        }

        /// Four finishing rounds (the "4").
        mutating func finish() -> UInt64 {
            v2 ^= 0xff
            for _ in 0..<4 { round() }
            return v0 ^ v1 ^ v2 ^ v3
        }

        private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
            value << count | value >> (64 - count)
        }
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }
}

/// A secret shuffle of the 64-bit numbers: a four-round Feistel network
/// whose round function is SipHash-2-4, which makes it a pseudorandom
/// permutation (Luby and Rackoff) as long as the key stays secret.
///
/// It turns a counter into ids that look random, reveal nothing of the
/// count, and map back to the counter without a lookup table.
public struct KeyedPermutation: Sendable, Hashable {
    private let function: SipHash

    /// A permutation under the 16-byte `key`.
    public init(key: [UInt8]) {
        function = SipHash(key: key)
    }

    /// The image of `value`.
    public func apply(_ value: UInt64) -> UInt64 {
        var (left, right) = (UInt32(truncatingIfNeeded: value >> 32), UInt32(truncatingIfNeeded: value))
        for round in 0..<4 {
            (left, right) = (right, left ^ roundFunction(round, right))
        }
        return UInt64(left) << 32 | UInt64(right)
    }

    /// The value whose image is `image`: `invert(apply(x)) == x`.
    public func invert(_ image: UInt64) -> UInt64 {
        var (left, right) = (UInt32(truncatingIfNeeded: image >> 32), UInt32(truncatingIfNeeded: image))
        for round in (0..<4).reversed() {
            (left, right) = (right ^ roundFunction(round, left), left)
        }
        return UInt64(left) << 32 | UInt64(right)
    }

    private func roundFunction(_ round: Int, _ half: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: function.hash(UInt64(round) << 32 | UInt64(half)))
    }
}
