import Testing

@testable import XMPPCore

/// Known-answer tests for the OpenSSL wrappers.
@Suite struct CryptoTests {
    /// Parses hex such as "0c60c80f".
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    @Test func sha1AndSHA256Digests() {
        // FIPS 180-2 Appendix A/B "abc", and the empty message.
        #expect(
            HashFunction.sha1.hash(Array("abc".utf8))
                == Self.hex("a9993e364706816aba3e25717850c26c9cd0d89d"))
        #expect(
            HashFunction.sha1.hash([])
                == Self.hex("da39a3ee5e6b4b0d3255bfef95601890afd80709"))
        #expect(
            HashFunction.sha256.hash(Array("abc".utf8))
                == Self.hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(
            HashFunction.sha256.hash([])
                == Self.hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(HashFunction.sha1.outputByteCount == 20)
        #expect(HashFunction.sha256.outputByteCount == 32)
    }

    struct HMACVector: Sendable, CustomTestStringConvertible {
        var name: String
        var key: [UInt8]
        var data: [UInt8]
        var sha256: String
        var testDescription: String { name }
    }

    /// RFC 4231 §4.2, §4.3, §4.4 and §4.7.
    static let rfc4231: [HMACVector] = [
        HMACVector(
            name: "Test Case 1", key: [UInt8](repeating: 0x0B, count: 20),
            data: Array("Hi There".utf8),
            sha256: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        HMACVector(
            name: "Test Case 2", key: Array("Jefe".utf8),
            data: Array("what do ya want for nothing?".utf8),
            sha256: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        HMACVector(
            name: "Test Case 3", key: [UInt8](repeating: 0xAA, count: 20),
            data: [UInt8](repeating: 0xDD, count: 50),
            sha256: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        HMACVector(
            name: "Test Case 6", key: [UInt8](repeating: 0xAA, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            sha256: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
    ]

    @Test(arguments: rfc4231) func hmacSHA256(_ vector: HMACVector) {
        #expect(
            HashFunction.sha256.hmac(key: vector.key, message: vector.data)
                == Self.hex(vector.sha256))
    }

    @Test func hmacSHA1AndEmptyInputs() {
        // RFC 2202 §3 test case 2.
        #expect(
            HashFunction.sha1.hmac(
                key: Array("Jefe".utf8),
                message: Array("what do ya want for nothing?".utf8))
                == Self.hex("effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"))
        // HMAC with an empty key and message is still defined (RFC 2104).
        #expect(
            HashFunction.sha256.hmac(key: [], message: [])
                == Self.hex("b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"))
    }

    struct PBKDF2Vector: Sendable, CustomTestStringConvertible {
        var password: [UInt8]
        var salt: [UInt8]
        var iterations: Int
        var derivedKey: String
        var testDescription: String { "c=\(iterations), dkLen=\(derivedKey.count / 2)" }
    }

    /// RFC 6070 §2, all but the 16777216-iteration case.
    static let rfc6070: [PBKDF2Vector] = [
        PBKDF2Vector(
            password: Array("password".utf8), salt: Array("salt".utf8), iterations: 1,
            derivedKey: "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        PBKDF2Vector(
            password: Array("password".utf8), salt: Array("salt".utf8), iterations: 2,
            derivedKey: "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
        PBKDF2Vector(
            password: Array("password".utf8), salt: Array("salt".utf8), iterations: 4096,
            derivedKey: "4b007901b765489abead49d926f721d065a429c1"),
        PBKDF2Vector(
            password: Array("passwordPASSWORDpassword".utf8),
            salt: Array("saltSALTsaltSALTsaltSALTsaltSALTsalt".utf8), iterations: 4096,
            derivedKey: "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
        PBKDF2Vector(
            password: Array("pass\0word".utf8), salt: Array("sa\0lt".utf8), iterations: 4096,
            derivedKey: "56fa6aa75548099dcc37d7f03425e0c3"),
    ]

    @Test(arguments: rfc6070) func pbkdf2SHA1(_ vector: PBKDF2Vector) {
        let expected = Self.hex(vector.derivedKey)
        #expect(
            HashFunction.sha1.pbkdf2(
                password: vector.password, salt: vector.salt, iterations: vector.iterations,
                outputByteCount: expected.count) == expected)
    }

    @Test func pbkdf2SHA256DefaultsToOneDigest() {
        let key = HashFunction.sha256.pbkdf2(
            password: Array("password".utf8), salt: Array("salt".utf8), iterations: 1)
        #expect(key == Self.hex("120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"))
    }

    @Test func randomBytesHaveTheRequestedLengthAndDiffer() {
        let first = Crypto.randomBytes(count: 32)
        let second = Crypto.randomBytes(count: 32)
        #expect(first.count == 32)
        #expect(first != second)
        #expect(Crypto.randomBytes(count: 0).isEmpty)
    }

    @Test func constantTimeEquals() {
        let key = Self.hex("000102030405")
        #expect(Crypto.constantTimeEquals(key, key))
        #expect(Crypto.constantTimeEquals([], []))
        #expect(!Crypto.constantTimeEquals(key, Self.hex("000102030406")))
        #expect(!Crypto.constantTimeEquals(key, Self.hex("0001020304")))
        #expect(!Crypto.constantTimeEquals(key, []))
    }
}

/// SipHash-2-4 against the paper's vectors, and the permutation built on it.
@Suite struct SipHashTests {
    private let key = SipHash(key: Array(0..<16))

    @Test func matchesThePublishedVectors() {
        #expect(key.hash([]) == 0x726f_db47_dd0e_0e31)
        #expect(key.hash(Array(0..<15)) == 0xa129_ca61_49be_45e5, "the worked example of the paper's appendix A")
    }

    @Test func hashingAWordEqualsHashingItsLittleEndianBytes() {
        for value: UInt64 in [0, 1, 0x0102_0304_0506_0708, .max] {
            let bytes = (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
            #expect(key.hash(value) == key.hash(bytes))
        }
    }

    @Test func thePermutationInvertsAndDependsOnTheKey() {
        let permutation = KeyedPermutation(key: Array(repeating: 7, count: 16))
        let other = KeyedPermutation(key: Array(repeating: 8, count: 16))
        let values: [UInt64] = [0, 1, 2, 3, 1 << 20, .max - 1, .max]
        let images = values.map(permutation.apply)
        #expect(Set(images).count == values.count)
        #expect(images.map(permutation.invert) == values)
        #expect(values.map(other.apply) != images)
        #expect(images[1] != 1 && images[2] &- images[1] != 1, "consecutive values do not look consecutive")
    }
}
