import Testing
@testable import XMPPServer

/// HPACK against the examples of RFC 7541 Appendix C, the headers of an
/// APNs request, and blocks that must be refused.
@Suite struct HPACKTests {
    typealias Header = HPACK.Header

    /// Bytes from hex as the RFC prints them ("8286 8441").
    private func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    /// The dynamic table, newest first, read by decoding indexed fields
    /// 62, 63, … on copies of `decoder` until one is refused.
    private func dynamicTable(_ decoder: HPACK.Decoder) -> [Header] {
        var table: [Header] = []
        for index in 62...126 {
            var probe = decoder
            guard let fields = try? probe.decode([0x80 | UInt8(index)]) else { break }
            table += fields
        }
        return table
    }

    /// Why `decoder` refuses `block`; nil if it decodes.
    private func refusal(_ block: [UInt8], _ decoder: HPACK.Decoder = HPACK.Decoder()) -> String? {
        var decoder = decoder
        do {
            _ = try decoder.decode(block)
            return nil
        } catch {
            return error.reason
        }
    }

    // MARK: C.1 integers

    /// C.1.1: 10 with a 5-bit prefix, read as a table size update to 10.
    @Test func integerInPrefix() {
        #expect(refusal([0x2A], HPACK.Decoder(maxTableSize: 10)) == nil)
        #expect(refusal([0x2A], HPACK.Decoder(maxTableSize: 9)) == "a dynamic table size update to 10, above 9")
    }

    /// C.1.2: 1337 with a 5-bit prefix (31, then 154, 10).
    @Test func integerWithContinuation() {
        #expect(refusal([0x3F, 0x9A, 0x0A], HPACK.Decoder(maxTableSize: 1337)) == nil)
        #expect(
            refusal([0x3F, 0x9A, 0x0A], HPACK.Decoder(maxTableSize: 1336))
                == "a dynamic table size update to 1337, above 1336")
    }

    /// C.1.3: 42 at an octet boundary. No HPACK integer has an 8-bit
    /// prefix; the same octet is the length of a plain string (H = 0).
    @Test func integerAtOctetBoundary() throws {
        var decoder = HPACK.Decoder()
        let value = String(repeating: "v", count: 42)
        let fields = try decoder.decode([0x00, 0x01, 0x6E, 0x2A] + Array(value.utf8))
        #expect(fields == [Header("n", value)])
    }

    /// The largest integer accepted is 2^24; the encoding of 2^24 + 1 or
    /// one with a fifth continuation byte is refused.
    @Test func integerBounds() {
        let decoder = HPACK.Decoder(maxTableSize: 1 << 30)
        #expect(refusal([0x3F, 0xE1, 0xFF, 0xFF, 0x07], decoder) == nil)
        #expect(refusal([0x3F, 0xE2, 0xFF, 0xFF, 0x07], decoder) == "an integer above 16777216")
        #expect(refusal([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]) == "an integer above 16777216")
        #expect(refusal([0x3F, 0x80, 0x80, 0x80, 0x80, 0x00], decoder) == "an integer with too many continuation bytes")
    }

    // MARK: C.2 single fields

    @Test func literalWithIndexing() throws {
        var decoder = HPACK.Decoder()
        let block = bytes("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572")
        #expect(try decoder.decode(block) == [Header("custom-key", "custom-header")])
        #expect(dynamicTable(decoder) == [Header("custom-key", "custom-header")])
    }

    @Test func literalWithoutIndexing() throws {
        var decoder = HPACK.Decoder()
        #expect(try decoder.decode(bytes("040c 2f73 616d 706c 652f 7061 7468")) == [Header(":path", "/sample/path")])
        #expect(dynamicTable(decoder) == [])
    }

    @Test func literalNeverIndexed() throws {
        var decoder = HPACK.Decoder()
        let block = bytes("1008 7061 7373 776f 7264 0673 6563 7265 74")
        #expect(try decoder.decode(block) == [Header("password", "secret")])
        #expect(dynamicTable(decoder) == [])
    }

    @Test func indexedField() throws {
        var decoder = HPACK.Decoder()
        #expect(try decoder.decode([0x82]) == [Header(":method", "GET")])
        #expect(try decoder.decode([0xBD]) == [Header("www-authenticate", "")])
        #expect(dynamicTable(decoder) == [])
    }

    // MARK: C.3, C.4 requests

    static let firstRequest = [
        Header(":method", "GET"), Header(":scheme", "http"), Header(":path", "/"),
        Header(":authority", "www.example.com"),
    ]
    static let secondRequest = firstRequest + [Header("cache-control", "no-cache")]
    static let thirdRequest = [
        Header(":method", "GET"), Header(":scheme", "https"), Header(":path", "/index.html"),
        Header(":authority", "www.example.com"), Header("custom-key", "custom-value"),
    ]

    /// Decodes three request blocks in turn, checking fields and table.
    private func checkRequests(_ blocks: [String]) throws {
        var decoder = HPACK.Decoder()
        #expect(try decoder.decode(bytes(blocks[0])) == Self.firstRequest)
        #expect(dynamicTable(decoder) == [Header(":authority", "www.example.com")])
        #expect(try decoder.decode(bytes(blocks[1])) == Self.secondRequest)
        #expect(
            dynamicTable(decoder) == [Header("cache-control", "no-cache"), Header(":authority", "www.example.com")])
        #expect(try decoder.decode(bytes(blocks[2])) == Self.thirdRequest)
        #expect(
            dynamicTable(decoder) == [
                Header("custom-key", "custom-value"), Header("cache-control", "no-cache"),
                Header(":authority", "www.example.com"),
            ])
        // The second block refers to the first one's entry (index 62).
        #expect(refusal(bytes(blocks[1])) == "index 62 beyond the 0 dynamic entries")
    }

    @Test func requestsWithoutHuffman() throws {
        try checkRequests([
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ])
    }

    @Test func requestsWithHuffman() throws {
        try checkRequests([
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
            "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ])
    }

    // MARK: C.5, C.6 responses, table size 256

    static let date21 = Header("date", "Mon, 21 Oct 2013 20:13:21 GMT")
    static let location = Header("location", "https://www.example.com")
    static let cookie = Header("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1")

    /// Decodes three response blocks in turn, checking fields and eviction.
    private func checkResponses(_ blocks: [String]) throws {
        var decoder = HPACK.Decoder(maxTableSize: 256)
        let cacheControl = Header("cache-control", "private")
        #expect(
            try decoder.decode(bytes(blocks[0]))
                == [Header(":status", "302"), cacheControl, Self.date21, Self.location])
        #expect(dynamicTable(decoder) == [Self.location, Self.date21, cacheControl, Header(":status", "302")])
        // ":status: 307" (42 bytes) evicts the oldest, ":status: 302" (42 bytes).
        #expect(
            try decoder.decode(bytes(blocks[1]))
                == [Header(":status", "307"), cacheControl, Self.date21, Self.location])
        #expect(dynamicTable(decoder) == [Header(":status", "307"), Self.location, Self.date21, cacheControl])
        let date22 = Header("date", "Mon, 21 Oct 2013 20:13:22 GMT")
        #expect(
            try decoder.decode(bytes(blocks[2])) == [
                Header(":status", "200"), cacheControl, date22, Self.location, Header("content-encoding", "gzip"),
                Self.cookie,
            ])
        #expect(dynamicTable(decoder) == [Self.cookie, Header("content-encoding", "gzip"), date22])
    }

    @Test func responsesWithoutHuffman() throws {
        try checkResponses([
            """
            4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32
            3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d
            """,
            "4803 3330 37c1 c0bf",
            """
            88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970
            7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61
            6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31
            """,
        ])
    }

    @Test func responsesWithHuffman() throws {
        try checkResponses([
            """
            4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad
            1718 63c7 8f0b 97c8 e9ae 82ae 43d3
            """,
            "4883 640e ffc1 c0bf",
            """
            88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2
            e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07
            """,
        ])
    }

    // MARK: The dynamic table

    /// An entry larger than the whole table empties it and is not added.
    @Test func oversizedEntryEmptiesTable() throws {
        var decoder = HPACK.Decoder(maxTableSize: 256)
        _ = try decoder.decode(bytes("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"))
        #expect(dynamicTable(decoder) == [Header("custom-key", "custom-header")])
        // "x" and 230 bytes: 263 > 256.
        let value = String(repeating: "v", count: 230)
        #expect(try decoder.decode([0x40, 0x01, 0x78, 0x7F, 0x67] + Array(value.utf8)) == [Header("x", value)])
        #expect(dynamicTable(decoder) == [])
    }

    /// A size update evicts what no longer fits; 0 empties the table.
    @Test func sizeUpdateEvicts() throws {
        var decoder = HPACK.Decoder()
        _ = try decoder.decode(bytes("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"))
        _ = try decoder.decode(bytes("8286 84be 5808 6e6f 2d63 6163 6865"))
        // 110 bytes; a table of 60 keeps only the newest (53).
        #expect(try decoder.decode([0x3F, 0x1D]) == [])
        #expect(dynamicTable(decoder) == [Header("cache-control", "no-cache")])
        #expect(try decoder.decode([0x20, 0x82]) == [Header(":method", "GET")])
        #expect(dynamicTable(decoder) == [])
    }

    /// Entry sizes count the octets as sent, not their lossy UTF-8 reading
    /// (U+FFFD is 3 bytes): two 34-byte entries fill a 68-byte table.
    @Test func invalidUTF8KeepsOctetAccounting() throws {
        var decoder = HPACK.Decoder(maxTableSize: 68)
        #expect(try decoder.decode([0x40, 0x01, 0x78, 0x01, 0xFF]) == [Header("x", "\u{FFFD}")])
        #expect(try decoder.decode([0x40, 0x01, 0x79, 0x01, 0xFE]) == [Header("y", "\u{FFFD}")])
        #expect(dynamicTable(decoder) == [Header("y", "\u{FFFD}"), Header("x", "\u{FFFD}")])
    }

    // MARK: Encoding

    @Test func encodesLiteralsWithoutIndexing() {
        let token = String(repeating: "t", count: 200)
        let encoded = HPACK.encode([
            Header(":method", "POST"), Header("authorization", token), Header("apns-topic", "com.example.app"),
        ])
        // Name index 2 (the first :method); name index 23 = 15 + 8; length 200 = 127 + 73; a literal name.
        let expected: [UInt8] =
            [0x02, 0x04] + Array("POST".utf8)
            + [0x0F, 0x08, 0x7F, 0x49] + Array(token.utf8)
            + [0x00, 0x0A] + Array("apns-topic".utf8) + [0x0F] + Array("com.example.app".utf8)
        #expect(encoded == expected)
    }

    @Test func apnsRequestRoundTrip() throws {
        let jwt =
            "eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ."
            + "eyJpc3MiOiJERUYxMjNHSElKIiwiaWF0IjoxNzAwMDAwMDAwfQ."
            + String(repeating: "MEUCIQDx7Yk3vQ2bq9zN4", count: 6)
        let headers = [
            Header(":method", "POST"), Header(":scheme", "https"),
            Header(":path", "/3/device/" + String(repeating: "0123456789abcdef", count: 4)),
            Header(":authority", "api.push.apple.com"), Header("authorization", "bearer " + jwt),
            Header("apns-topic", "com.example.app"), Header("apns-push-type", "alert"),
            Header("apns-priority", "10"), Header("apns-collapse-id", "x"),
        ]
        var decoder = HPACK.Decoder()
        #expect(try decoder.decode(HPACK.encode(headers)) == headers)
        #expect(dynamicTable(decoder) == [])
    }

    // MARK: Refusals

    @Test func refusesIndexZero() {
        #expect(refusal([0x80]) == "index 0")
        // In a literal, name index 0 means a literal name follows.
        #expect(refusal([0x40, 0x01, 0x61, 0x00]) == nil)
        #expect(refusal([0x00, 0x01, 0x61]) == "a truncated integer")
    }

    @Test func refusesIndexBeyondTables() {
        #expect(refusal([0xBE]) == "index 62 beyond the 0 dynamic entries")
        // A name index of 63 = 63 + 0 (6-bit prefix).
        #expect(refusal([0x7F, 0x00, 0x00]) == "index 63 beyond the 0 dynamic entries")
    }

    @Test func refusesTruncatedInteger() {
        #expect(refusal([0xFF]) == "a truncated integer")
        #expect(refusal([0xFF, 0x80]) == "a truncated integer")
        #expect(refusal([0x3F, 0x9A]) == "a truncated integer")
    }

    @Test func refusesTruncatedString() {
        #expect(refusal([0x00, 0x05, 0x61, 0x62]) == "a truncated string")
        #expect(refusal([0x04, 0x83, 0x61]) == "a truncated string")
    }

    @Test func decodesHuffmanPadding() throws {
        // "a" is 00011; three bits of padding.
        var decoder = HPACK.Decoder()
        #expect(try decoder.decode([0x00, 0x01, 0x78, 0x81, 0x1F]) == [Header("x", "a")])
        // "aaa" is 15 bits; one bit of padding.
        #expect(try decoder.decode([0x00, 0x01, 0x78, 0x82, 0x18, 0xC7]) == [Header("x", "aaa")])
    }

    @Test func refusesBadHuffmanPadding() {
        // Eight bits of ones, eleven after "a".
        #expect(refusal([0x00, 0x01, 0x78, 0x81, 0xFF]) == "Huffman padding longer than 7 bits")
        #expect(refusal([0x00, 0x01, 0x78, 0x82, 0x1F, 0xFF]) == "Huffman padding longer than 7 bits")
        // "a" then 000.
        #expect(refusal([0x00, 0x01, 0x78, 0x81, 0x18]) == "Huffman padding that is not all ones")
    }

    @Test func refusesHuffmanEOS() {
        // EOS is 30 ones; two more fill the last octet.
        #expect(refusal([0x00, 0x01, 0x78, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]) == "an EOS symbol in a Huffman-coded string")
        // "a" (00011), EOS, then padding 1.
        #expect(
            refusal([0x00, 0x01, 0x78, 0x85, 0x1F, 0xFF, 0xFF, 0xFF, 0xFF])
                == "an EOS symbol in a Huffman-coded string")
    }

    @Test func refusesSizeUpdateAboveMaximum() {
        #expect(refusal([0x3F, 0xE1, 0x1F]) == nil)
        #expect(refusal([0x3F, 0xE2, 0x1F]) == "a dynamic table size update to 4097, above 4096")
    }

    @Test func refusesSizeUpdateAfterField() {
        #expect(refusal([0x20, 0x20, 0x82]) == nil)
        #expect(refusal([0x82, 0x20]) == "a dynamic table size update after a header field")
    }

    @Test func refusesHeaderListOverMaximum() {
        // "custom-key: custom-header" counts 10 + 13 + 32 = 55.
        let block = bytes("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572")
        #expect(refusal(block, HPACK.Decoder(maxHeaderListSize: 55)) == nil)
        #expect(refusal(block, HPACK.Decoder(maxHeaderListSize: 54)) == "a header list larger than 54 bytes")
        // ":method: GET" counts 42; the second one exceeds 83.
        #expect(refusal([0x82, 0x82], HPACK.Decoder(maxHeaderListSize: 84)) == nil)
        #expect(refusal([0x82, 0x82], HPACK.Decoder(maxHeaderListSize: 83)) == "a header list larger than 83 bytes")
    }
}
