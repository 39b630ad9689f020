/// Base64 exactly as RFC 4648 §4 defines it: the standard alphabet, `=`
/// padding to a multiple of four characters, no line breaks or whitespace.
///
/// Decoding is strict because RFC 6120 §6.4.2 requires a SASL receiver to
/// answer data that is "not base64 encoded properly" with `incorrect-encoding`;
/// it also rejects non-zero bits in the padding (RFC 4648 §3.5), so every byte
/// string has exactly one accepted encoding.
public enum Base64 {
    /// Encodes `bytes`, padding with `=`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(second == nil ? pad : alphabet[Int(group >> 6 & 0x3F)])
            output.append(third == nil ? pad : alphabet[Int(group & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Encodes `bytes` with the URL- and filename-safe alphabet of RFC 4648
    /// §5 (`-` and `_` for `+` and `/`), without padding: for random ids
    /// and tokens that go into URLs and attributes.
    public static func encodeURLSafe(_ bytes: some Collection<UInt8>) -> String {
        String(
            encode(bytes).unicodeScalars.compactMap { scalar in
                switch scalar {
                case "+": "-"
                case "/": "_"
                case "=": nil
                default: Character(scalar)
                }
            })
    }

    /// Decodes base64 text.
    ///
    /// - Throws: `Base64Error` when the length is not a multiple of four, a
    ///   character is outside the alphabet, or the padding is misplaced or
    ///   carries non-zero bits.
    public static func decode(_ text: String) throws(Base64Error) -> [UInt8] {
        try decode(utf8: text.utf8)
    }

    /// Decodes base64 given as its UTF-8 (ASCII) bytes, as SCRAM attribute
    /// values arrive.
    ///
    /// - Throws: `Base64Error`, as `decode(_:)`.
    public static func decode(utf8 encoded: some Collection<UInt8>) throws(Base64Error) -> [UInt8] {
        let input = Array(encoded)
        guard input.count % 4 == 0 else { throw .invalidLength }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var offset = 0
        while offset < input.count {
            let isLastGroup = offset + 4 == input.count
            var group: UInt32 = 0
            var padding = 0
            for index in offset..<offset + 4 {
                let character = input[index]
                if character == pad {
                    // Only the last one or two characters of the last group.
                    guard isLastGroup, index - offset >= 2 else { throw .invalidPadding }
                    padding += 1
                    group <<= 6
                    continue
                }
                guard padding == 0 else { throw .invalidPadding }
                let value = decodeTable[Int(character)]
                guard value != invalid else { throw .invalidCharacter(offset: index) }
                group = group << 6 | UInt32(value)
            }
            // The bits under the padding must be zero (RFC 4648 §3.5).
            let unusedBits: UInt32 = padding == 2 ? 0xFFFF : padding == 1 ? 0xFF : 0
            guard group & unusedBits == 0 else { throw .invalidPadding }
            output.append(UInt8(group >> 16 & 0xFF))
            if padding < 2 { output.append(UInt8(group >> 8 & 0xFF)) }
            if padding < 1 { output.append(UInt8(group & 0xFF)) }
            offset += 4
        }
        return output
    }

    private static let pad = UInt8(ascii: "=")
    private static let invalid: UInt8 = 0xFF
    private static let alphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}

/// Why base64 text was rejected.
public enum Base64Error: Error, Sendable, Hashable {
    /// The length is not a multiple of four.
    case invalidLength
    /// The character at this offset is outside the base64 alphabet
    /// (whitespace included).
    case invalidCharacter(offset: Int)
    /// `=` appears other than as the last one or two characters, or the
    /// bits it stands in for are not zero.
    case invalidPadding
}
