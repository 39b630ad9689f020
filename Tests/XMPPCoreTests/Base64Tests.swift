import Testing

@testable import XMPPCore

@Suite struct Base64Tests {
    /// RFC 4648 §10.
    static let rfc4648: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test func rfc4648TestVectors() throws {
        for (plain, encoded) in Self.rfc4648 {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(try Base64.decode(encoded) == Array(plain.utf8))
        }
    }

    /// RFC 4648 §5: `-` and `_` for `+` and `/`, and no padding.
    @Test func urlSafeAlphabetWithoutPadding() {
        #expect(Base64.encodeURLSafe([0xFB, 0xFF]) == "-_8")
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        #expect(Base64.encodeURLSafe(Array("foob".utf8)) == "Zm9vYg")
    }

    @Test func everyByteValueRoundTrips() throws {
        let bytes = (0...255).map { UInt8($0) }
        for length in 0...bytes.count {
            let prefix = Array(bytes.prefix(length))
            #expect(try Base64.decode(Base64.encode(prefix)) == prefix)
        }
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
    }

    @Test func rejectsLengthsThatAreNotMultiplesOfFour() {
        #expect(throws: Base64Error.invalidLength) { try Base64.decode("Zm9") }
        #expect(throws: Base64Error.invalidLength) { try Base64.decode("Zg") }
        #expect(throws: Base64Error.invalidLength) { try Base64.decode("Zm9v\n") }
    }

    @Test func rejectsCharactersOutsideTheAlphabet() {
        #expect(throws: Base64Error.invalidCharacter(offset: 2)) { try Base64.decode("Zm 9") }
        #expect(throws: Base64Error.invalidCharacter(offset: 3)) { try Base64.decode("Zm9-") }
        #expect(throws: Base64Error.invalidCharacter(offset: 4)) { try Base64.decode("Zm9v_m8=") }
        #expect(throws: Base64Error.invalidCharacter(offset: 2)) { try Base64.decode("Zmé") }
    }

    @Test func rejectsMisplacedPadding() {
        #expect(throws: Base64Error.invalidPadding) { try Base64.decode("Z===") }
        #expect(throws: Base64Error.invalidPadding) { try Base64.decode("====") }
        #expect(throws: Base64Error.invalidPadding) { try Base64.decode("Zg=a") }
        #expect(throws: Base64Error.invalidPadding) { try Base64.decode("Zm8=Zm8=") }
    }

    @Test func rejectsNonZeroPaddingBits() {
        // "Zh==" and "Zm9=" would decode to "f" and "fo" if the stray bits were dropped.
        #expect(throws: Base64Error.invalidPadding) { try Base64.decode("Zh==") }
        #expect(throws: Base64Error.invalidPadding) { try Base64.decode("Zm9=") }
    }

    @Test func decodesFromUTF8Bytes() throws {
        let bytes: ArraySlice<UInt8> = Array("xxZm9vYmFy".utf8)[2...]
        #expect(try Base64.decode(utf8: bytes) == Array("foobar".utf8))
    }
}
