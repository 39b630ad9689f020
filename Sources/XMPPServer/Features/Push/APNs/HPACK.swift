/// HPACK (RFC 7541), the header compression of HTTP/2, for the client that
/// talks to Apple's push service.
///
/// The encoder keeps no state: every field is a literal without indexing,
/// so the peer's dynamic table stays empty. The decoder is strict, because
/// a block misread desynchronises the connection's dynamic table.
enum HPACK {
    /// One header field.
    struct Header: Sendable, Hashable {
        var name: String
        var value: String

        init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Why a header block could not be decoded (the connection then ends
    /// with COMPRESSION_ERROR, RFC 7540 §4.3).
    struct DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// Encodes `headers`, in order, as literal header fields without
    /// indexing (§6.2.2), using a static-table name index when the name is
    /// in the static table, string literals without Huffman coding. Names
    /// must already be lowercase.
    static func encode(_ headers: [Header]) -> [UInt8] {
        var output: [UInt8] = []
        for header in headers {
            if let index = staticNameIndex[header.name] {
                appendInteger(index, prefixBits: 4, to: &output)
            } else {
                output.append(0x00)
                appendString(header.name, to: &output)
            }
            appendString(header.value, to: &output)
        }
        return output
    }

    /// The decoding side of one connection: its dynamic table (§2.3.2, §4)
    /// lives as long as the connection. After an error its state is
    /// undefined, as the connection ends.
    struct Decoder: Sendable {
        /// The SETTINGS_HEADER_TABLE_SIZE we announce: the most a size
        /// update may set.
        let maxTableSize: Int
        /// The most bytes of decoded name + value + 32 per field (§4.1) one
        /// block may yield.
        let maxHeaderListSize: Int
        /// The table's current maximum size (§4.2), set by size updates.
        private var capacity: Int
        /// The dynamic table, oldest first from `oldest` on; the newest
        /// entry, last, has dynamic index 1 (§2.3.3).
        private var entries: [Entry] = []
        /// Where the live entries start in `entries`: evicted ones are
        /// dropped in batches, keeping eviction amortised O(1).
        private var oldest = 0
        /// The sum of the live entries' sizes (§4.1).
        private var size = 0

        /// - Parameters:
        ///   - maxTableSize: the SETTINGS_HEADER_TABLE_SIZE we announce
        ///     (default 4096): a size update above it is an error.
        ///   - maxHeaderListSize: the most bytes of decoded name + value + 32
        ///     per field (§4.1 accounting) a block may yield; beyond: error.
        init(maxTableSize: Int = 4096, maxHeaderListSize: Int = 16 << 10) {
            self.maxTableSize = maxTableSize
            self.maxHeaderListSize = maxHeaderListSize
            capacity = maxTableSize
        }

        /// Decodes one complete header block (HEADERS + CONTINUATION
        /// payloads joined).
        mutating func decode(_ block: [UInt8]) throws(DecodingError) -> [Header] {
            var reader = Reader(bytes: block)
            var headers: [Header] = []
            var listSize = 0
            while reader.offset < block.count {
                let first = block[reader.offset]
                let entry: Entry
                if first & 0x80 != 0 {
                    // §6.1: indexed header field.
                    entry = try self.entry(at: reader.integer(prefixBits: 7))
                } else if first & 0x40 != 0 {
                    // §6.2.1: literal with incremental indexing.
                    entry = try literal(&reader, prefixBits: 6)
                    insert(entry)
                } else if first & 0x20 != 0 {
                    // §6.3: dynamic table size update, only before the
                    // first field (§4.2).
                    guard headers.isEmpty else {
                        throw DecodingError(reason: "a dynamic table size update after a header field")
                    }
                    let newCapacity = try reader.integer(prefixBits: 5)
                    guard newCapacity <= maxTableSize else {
                        throw DecodingError(
                            reason: "a dynamic table size update to \(newCapacity), above \(maxTableSize)")
                    }
                    capacity = newCapacity
                    evict(toFit: 0)
                    continue
                } else {
                    // §6.2.2 and §6.2.3: literal without indexing, never
                    // indexed; both have a 4-bit prefix.
                    entry = try literal(&reader, prefixBits: 4)
                }
                listSize += entry.size
                guard listSize <= maxHeaderListSize else {
                    throw DecodingError(reason: "a header list larger than \(maxHeaderListSize) bytes")
                }
                headers.append(entry.header)
            }
            return headers
        }

        /// A literal field (§6.2): a name index or a literal name, then the
        /// value.
        private func literal(_ reader: inout Reader, prefixBits: Int) throws(DecodingError) -> Entry {
            let index = try reader.integer(prefixBits: prefixBits)
            let name: [UInt8]
            if index == 0 {
                name = try reader.string()
            } else {
                name = Array(try entry(at: index).header.name.utf8)
            }
            return Entry(name: name, value: try reader.string())
        }

        /// The entry at `index` of the static table followed by the dynamic
        /// table (§2.3.3).
        private func entry(at index: Int) throws(DecodingError) -> Entry {
            guard index > 0 else { throw DecodingError(reason: "index 0") }
            if index <= HPACK.staticTable.count { return HPACK.staticTable[index - 1] }
            let dynamicIndex = index - HPACK.staticTable.count
            guard dynamicIndex <= entries.count - oldest else {
                throw DecodingError(reason: "index \(index) beyond the \(entries.count - oldest) dynamic entries")
            }
            return entries[entries.count - dynamicIndex]
        }

        /// Adds `entry` to the dynamic table, evicting as §4.4 says: an
        /// entry larger than the table empties it and is not added.
        private mutating func insert(_ entry: Entry) {
            evict(toFit: entry.size)
            if entry.size <= capacity {
                entries.append(entry)
                size += entry.size
            }
        }

        /// Evicts the oldest entries until `incoming` more bytes fit
        /// (§4.3, §4.4), or none are left.
        private mutating func evict(toFit incoming: Int) {
            while size + incoming > capacity, oldest < entries.count {
                size -= entries[oldest].size
                oldest += 1
            }
            if oldest > 0, oldest * 2 >= entries.count {
                entries.removeFirst(oldest)
                oldest = 0
            }
        }
    }

    /// A header field with its size as §4.1 counts it, from the octets as
    /// sent: a lossy UTF-8 decoding must not change the table's accounting.
    private struct Entry: Sendable {
        var header: Header
        var size: Int

        init(name: [UInt8], value: [UInt8]) {
            header = Header(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
            size = name.count + value.count + 32
        }
    }

    /// Reads the primitives of one header block.
    private struct Reader {
        /// Integers above this are refused (§5.1 lets a decoder limit them):
        /// no index, length or table size here comes near it.
        static let maxInteger = 1 << 24

        let bytes: [UInt8]
        var offset = 0

        /// An integer with an N-bit prefix (§5.1), at most `maxInteger`.
        mutating func integer(prefixBits: Int) throws(DecodingError) -> Int {
            guard offset < bytes.count else { throw DecodingError(reason: "a truncated integer") }
            let prefixMax = (1 << prefixBits) - 1
            var value = Int(bytes[offset]) & prefixMax
            offset += 1
            guard value == prefixMax else { return value }
            var shift = 0
            while true {
                guard offset < bytes.count else { throw DecodingError(reason: "a truncated integer") }
                let byte = bytes[offset]
                offset += 1
                value += Int(byte & 0x7F) << shift
                guard value <= Self.maxInteger else {
                    throw DecodingError(reason: "an integer above \(Self.maxInteger)")
                }
                if byte & 0x80 == 0 { return value }
                shift += 7
                // Four continuation bytes carry 28 bits, more than enough
                // for `maxInteger`; a fifth only adds zeros or overflow.
                guard shift < 28 else { throw DecodingError(reason: "an integer with too many continuation bytes") }
            }
        }

        /// A string literal (§5.2), Huffman-decoded if so marked.
        mutating func string() throws(DecodingError) -> [UInt8] {
            let start = offset
            let length = try integer(prefixBits: 7)
            guard length <= bytes.count - offset else { throw DecodingError(reason: "a truncated string") }
            let raw = bytes[offset..<offset + length]
            offset += length
            return bytes[start] & 0x80 != 0 ? try HPACK.huffmanDecode(raw) : Array(raw)
        }
    }

    /// Appends `value` with an N-bit prefix (§5.1), the prefix's other bits 0.
    private static func appendInteger(_ value: Int, prefixBits: Int, to output: inout [UInt8]) {
        let prefixMax = (1 << prefixBits) - 1
        guard value >= prefixMax else {
            output.append(UInt8(value))
            return
        }
        output.append(UInt8(prefixMax))
        var rest = value - prefixMax
        while rest >= 0x80 {
            output.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }

    /// Appends a string literal without Huffman coding (§5.2).
    private static func appendString(_ string: String, to output: inout [UInt8]) {
        appendInteger(string.utf8.count, prefixBits: 7, to: &output)
        output.append(contentsOf: string.utf8)
    }

    /// Decodes a Huffman-coded string (§5.2, Appendix B): a padding of at
    /// most 7 bits, all ones, and no EOS symbol.
    private static func huffmanDecode(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 8 / 5)
        var node = 0
        // The bits read since the last symbol, and whether all were ones.
        var pendingBits = 0
        var pendingOnes = true
        for byte in bytes {
            for shift in stride(from: 7, through: 0, by: -1) {
                let bit = Int(byte >> UInt8(shift) & 1)
                pendingBits += 1
                pendingOnes = pendingOnes && bit == 1
                let next = Int(huffmanTree[node * 2 + bit])
                guard next < 0 else {
                    node = next
                    continue
                }
                let symbol = -next - 1
                guard symbol != 256 else { throw DecodingError(reason: "an EOS symbol in a Huffman-coded string") }
                output.append(UInt8(symbol))
                node = 0
                pendingBits = 0
                pendingOnes = true
            }
        }
        guard pendingBits <= 7 else { throw DecodingError(reason: "Huffman padding longer than 7 bits") }
        guard pendingOnes else { throw DecodingError(reason: "Huffman padding that is not all ones") }
        return output
    }

    /// The Huffman code as a binary tree: node `n` has its children at
    /// `2n` (bit 0) and `2n + 1` (bit 1); a child is an inner node's number
    /// (above 0, the root being 0) or, negative, `-(symbol + 1)`.
    private static let huffmanTree: [Int16] = {
        var tree: [Int16] = [0, 0]
        for (symbol, (code, length)) in huffmanCodes.enumerated() {
            var node = 0
            for position in stride(from: Int(length) - 1, to: 0, by: -1) {
                let slot = node * 2 + Int(code >> UInt32(position) & 1)
                if tree[slot] == 0 {
                    tree[slot] = Int16(tree.count / 2)
                    tree += [0, 0]
                }
                node = Int(tree[slot])
            }
            tree[node * 2 + Int(code & 1)] = Int16(-symbol - 1)
        }
        return tree
    }()

    /// The Huffman code of Appendix B: (code, length in bits) for the
    /// symbols 0 to 255 and EOS (256).
    private static let huffmanCodes: [(UInt32, UInt8)] = [
        // 0-15
        (0x1ff8, 13), (0x7fffd8, 23), (0xfffffe2, 28), (0xfffffe3, 28),
        (0xfffffe4, 28), (0xfffffe5, 28), (0xfffffe6, 28), (0xfffffe7, 28),
        (0xfffffe8, 28), (0xffffea, 24), (0x3ffffffc, 30), (0xfffffe9, 28),
        (0xfffffea, 28), (0x3ffffffd, 30), (0xfffffeb, 28), (0xfffffec, 28),
        // 16-31
        (0xfffffed, 28), (0xfffffee, 28), (0xfffffef, 28), (0xffffff0, 28),
        (0xffffff1, 28), (0xffffff2, 28), (0x3ffffffe, 30), (0xffffff3, 28),
        (0xffffff4, 28), (0xffffff5, 28), (0xffffff6, 28), (0xffffff7, 28),
        (0xffffff8, 28), (0xffffff9, 28), (0xffffffa, 28), (0xffffffb, 28),
        // 32-47: ' ' ! " # $ % & ' ( ) * + , - . /
        (0x14, 6), (0x3f8, 10), (0x3f9, 10), (0xffa, 12),
        (0x1ff9, 13), (0x15, 6), (0xf8, 8), (0x7fa, 11),
        (0x3fa, 10), (0x3fb, 10), (0xf9, 8), (0x7fb, 11),
        (0xfa, 8), (0x16, 6), (0x17, 6), (0x18, 6),
        // 48-63: 0-9 : ; < = > ?
        (0x0, 5), (0x1, 5), (0x2, 5), (0x19, 6),
        (0x1a, 6), (0x1b, 6), (0x1c, 6), (0x1d, 6),
        (0x1e, 6), (0x1f, 6), (0x5c, 7), (0xfb, 8),
        (0x7ffc, 15), (0x20, 6), (0xffb, 12), (0x3fc, 10),
        // 64-79: @ A-O
        (0x1ffa, 13), (0x21, 6), (0x5d, 7), (0x5e, 7),
        (0x5f, 7), (0x60, 7), (0x61, 7), (0x62, 7),
        (0x63, 7), (0x64, 7), (0x65, 7), (0x66, 7),
        (0x67, 7), (0x68, 7), (0x69, 7), (0x6a, 7),
        // 80-95: P-Z [ \ ] ^ _
        (0x6b, 7), (0x6c, 7), (0x6d, 7), (0x6e, 7),
        (0x6f, 7), (0x70, 7), (0x71, 7), (0x72, 7),
        (0xfc, 8), (0x73, 7), (0xfd, 8), (0x1ffb, 13),
        (0x7fff0, 19), (0x1ffc, 13), (0x3ffc, 14), (0x22, 6),
        // 96-111: ` a-o
        (0x7ffd, 15), (0x3, 5), (0x23, 6), (0x4, 5),
        (0x24, 6), (0x5, 5), (0x25, 6), (0x26, 6),
        (0x27, 6), (0x6, 5), (0x74, 7), (0x75, 7),
        (0x28, 6), (0x29, 6), (0x2a, 6), (0x7, 5),
        // 112-127: p-z { | } ~ DEL
        (0x2b, 6), (0x76, 7), (0x2c, 6), (0x8, 5),
        (0x9, 5), (0x2d, 6), (0x77, 7), (0x78, 7),
        (0x79, 7), (0x7a, 7), (0x7b, 7), (0x7ffe, 15),
        (0x7fc, 11), (0x3ffd, 14), (0x1ffd, 13), (0xffffffc, 28),
        // 128-143
        (0xfffe6, 20), (0x3fffd2, 22), (0xfffe7, 20), (0xfffe8, 20),
        (0x3fffd3, 22), (0x3fffd4, 22), (0x3fffd5, 22), (0x7fffd9, 23),
        (0x3fffd6, 22), (0x7fffda, 23), (0x7fffdb, 23), (0x7fffdc, 23),
        (0x7fffdd, 23), (0x7fffde, 23), (0xffffeb, 24), (0x7fffdf, 23),
        // 144-159
        (0xffffec, 24), (0xffffed, 24), (0x3fffd7, 22), (0x7fffe0, 23),
        (0xffffee, 24), (0x7fffe1, 23), (0x7fffe2, 23), (0x7fffe3, 23),
        (0x7fffe4, 23), (0x1fffdc, 21), (0x3fffd8, 22), (0x7fffe5, 23),
        (0x3fffd9, 22), (0x7fffe6, 23), (0x7fffe7, 23), (0xffffef, 24),
        // 160-175
        (0x3fffda, 22), (0x1fffdd, 21), (0xfffe9, 20), (0x3fffdb, 22),
        (0x3fffdc, 22), (0x7fffe8, 23), (0x7fffe9, 23), (0x1fffde, 21),
        (0x7fffea, 23), (0x3fffdd, 22), (0x3fffde, 22), (0xfffff0, 24),
        (0x1fffdf, 21), (0x3fffdf, 22), (0x7fffeb, 23), (0x7fffec, 23),
        // 176-191
        (0x1fffe0, 21), (0x1fffe1, 21), (0x3fffe0, 22), (0x1fffe2, 21),
        (0x7fffed, 23), (0x3fffe1, 22), (0x7fffee, 23), (0x7fffef, 23),
        (0xfffea, 20), (0x3fffe2, 22), (0x3fffe3, 22), (0x3fffe4, 22),
        (0x7ffff0, 23), (0x3fffe5, 22), (0x3fffe6, 22), (0x7ffff1, 23),
        // 192-207
        (0x3ffffe0, 26), (0x3ffffe1, 26), (0xfffeb, 20), (0x7fff1, 19),
        (0x3fffe7, 22), (0x7ffff2, 23), (0x3fffe8, 22), (0x1ffffec, 25),
        (0x3ffffe2, 26), (0x3ffffe3, 26), (0x3ffffe4, 26), (0x7ffffde, 27),
        (0x7ffffdf, 27), (0x3ffffe5, 26), (0xfffff1, 24), (0x1ffffed, 25),
        // 208-223
        (0x7fff2, 19), (0x1fffe3, 21), (0x3ffffe6, 26), (0x7ffffe0, 27),
        (0x7ffffe1, 27), (0x3ffffe7, 26), (0x7ffffe2, 27), (0xfffff2, 24),
        (0x1fffe4, 21), (0x1fffe5, 21), (0x3ffffe8, 26), (0x3ffffe9, 26),
        (0xffffffd, 28), (0x7ffffe3, 27), (0x7ffffe4, 27), (0x7ffffe5, 27),
        // 224-239
        (0xfffec, 20), (0xfffff3, 24), (0xfffed, 20), (0x1fffe6, 21),
        (0x3fffe9, 22), (0x1fffe7, 21), (0x1fffe8, 21), (0x7ffff3, 23),
        (0x3fffea, 22), (0x3fffeb, 22), (0x1ffffee, 25), (0x1ffffef, 25),
        (0xfffff4, 24), (0xfffff5, 24), (0x3ffffea, 26), (0x7ffff4, 23),
        // 240-255
        (0x3ffffeb, 26), (0x7ffffe6, 27), (0x3ffffec, 26), (0x3ffffed, 26),
        (0x7ffffe7, 27), (0x7ffffe8, 27), (0x7ffffe9, 27), (0x7ffffea, 27),
        (0x7ffffeb, 27), (0xffffffe, 28), (0x7ffffec, 27), (0x7ffffed, 27),
        (0x7ffffee, 27), (0x7ffffef, 27), (0x7fffff0, 27), (0x3ffffee, 26),
        // 256: EOS
        (0x3fffffff, 30),
    ]

    /// The static table of Appendix A; index 1 is the first element.
    private static let staticTable: [Entry] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"),
        (":path", "/index.html"), (":scheme", "http"), (":scheme", "https"), (":status", "200"),
        (":status", "204"), (":status", "206"), (":status", "304"), (":status", "400"),
        (":status", "404"), (":status", "500"), ("accept-charset", ""), ("accept-encoding", "gzip, deflate"),
        ("accept-language", ""), ("accept-ranges", ""), ("accept", ""), ("access-control-allow-origin", ""),
        ("age", ""), ("allow", ""), ("authorization", ""), ("cache-control", ""),
        ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
        ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""),
        ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""),
        ("from", ""), ("host", ""), ("if-match", ""), ("if-modified-since", ""),
        ("if-none-match", ""), ("if-range", ""), ("if-unmodified-since", ""), ("last-modified", ""),
        ("link", ""), ("location", ""), ("max-forwards", ""), ("proxy-authenticate", ""),
        ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""),
        ("retry-after", ""), ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""),
        ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""),
        ("www-authenticate", ""),
    ].map { Entry(name: Array($0.0.utf8), value: Array($0.1.utf8)) }

    /// The static index of each name's first entry, for the encoder.
    private static let staticNameIndex: [String: Int] = Dictionary(
        staticTable.enumerated().map { ($1.header.name, $0 + 1) }, uniquingKeysWith: min)
}
