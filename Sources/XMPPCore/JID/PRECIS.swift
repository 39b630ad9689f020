import Foundation

/// Why a string was rejected by a PRECIS profile.
///
/// The scalar in each case is the first offending code point, after the
/// profile's mappings and normalization were applied.
public enum PRECISError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing is left after preparation; RFC 8265 §3.3.1 and §4.2.1 forbid
    /// zero-length usernames and passwords.
    case empty
    /// A code point the string class does not allow (RFC 8264 §9: controls,
    /// spaces or symbols in an identifier, default-ignorables, noncharacters,
    /// compatibility characters in an identifier, and so on).
    case disallowed(Unicode.Scalar)
    /// A code point not assigned in the Unicode version of this toolchain
    /// (RFC 8264 §9.13).
    case unassigned(Unicode.Scalar)
    /// A code point allowed only in some contexts (CONTEXTJ/CONTEXTO, RFC 5892
    /// Appendix A) that appears where its rule does not hold.
    case contextRule(Unicode.Scalar)

    public var description: String {
        switch self {
        case .empty: "the string is empty"
        case .disallowed(let scalar): "disallowed code point \(Self.describe(scalar))"
        case .unassigned(let scalar): "unassigned code point \(Self.describe(scalar))"
        case .contextRule(let scalar):
            "code point \(Self.describe(scalar)) is not allowed in this context"
        }
    }

    /// `U+0041 'A'`, or just `U+0000` when the scalar would not print.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator,
            .unassigned, .surrogate, .privateUse, .nonspacingMark, .enclosingMark:
            return code
        default:
            return "\(code) '\(scalar)'"
        }
    }
}

/// The PRECIS profiles XMPP needs (RFC 8264 framework, RFC 8265 profiles).
///
/// Both profiles take a fast path when the input is pure ASCII, which is
/// nearly every JID and password seen on the wire: a single byte scan with no
/// Foundation call and at most one allocation. Anything else goes through
/// width mapping, case mapping and NFC (via Foundation), then the code point
/// rules of RFC 8264 §9.
///
/// Not implemented: the Bidi Rule (RFC 5893) that RFC 8265 §3.3.2 applies to
/// usernames containing right-to-left characters. It needs the Unicode
/// Bidi_Class property, which the Swift standard library does not expose.
public enum PRECIS {
    /// Enforces the UsernameCaseMapped profile (RFC 8265 §3.3): the form used
    /// for SASL usernames and, with a few more exclusions, JID localparts.
    ///
    /// Steps, in the order RFC 8264 §7 gives: fullwidth and halfwidth
    /// characters are mapped to their narrow forms, letters to lowercase
    /// (Unicode toLowerCase without the context-dependent Final_Sigma rule, so
    /// `Σ` always becomes `σ`), the result is normalized to NFC and must then
    /// be a non-empty IdentifierClass string (RFC 8264 §4.2): letters, digits
    /// and printable ASCII; no spaces, controls, non-ASCII symbols or
    /// punctuation, compatibility characters such as U+2163 ROMAN NUMERAL
    /// FOUR, default-ignorables, noncharacters or unassigned code points.
    ///
    /// - Parameter s: The username as received or typed.
    /// - Returns: The enforced form; compare usernames by comparing these.
    /// - Throws: `PRECISError` saying which code point is not allowed, or
    ///   `.empty`.
    public static func usernameCaseMapped(_ s: String) throws(PRECISError) -> String {
        if let ascii = try s[...].withContiguousUTF8(asciiUsernameCaseMapped) { return ascii }
        return try usernameCaseMappedUnicode(s[...])
    }

    /// Enforces the OpaqueString profile (RFC 8265 §4.2), used for passwords.
    ///
    /// Non-ASCII spaces (general category Zs) are mapped to U+0020 and the
    /// string is normalized to NFC; case and width are kept. The result must
    /// be a non-empty FreeformClass string (RFC 8264 §4.3): anything printable
    /// is allowed, but not controls, default-ignorables, noncharacters or
    /// unassigned code points.
    ///
    /// - Parameter s: The password as received or typed.
    /// - Returns: The enforced form; hash or compare this, never the input.
    /// - Throws: `PRECISError` saying which code point is not allowed, or
    ///   `.empty`.
    public static func opaqueString(_ s: String) throws(PRECISError) -> String {
        if let ascii = try s[...].withContiguousUTF8(asciiOpaqueString) { return ascii }
        return try opaqueStringUnicode(s[...])
    }

    // MARK: ASCII paths (JID calls these on slices of its input)

    /// UsernameCaseMapped for ASCII input, or `nil` at the first non-ASCII
    /// byte. Throwing before that byte is seen gives the same answer as the
    /// Unicode path: space is ID_DIS and controls are DISALLOWED there too.
    static func asciiUsernameCaseMapped(
        _ bytes: UnsafeBufferPointer<UInt8>
    ) throws(PRECISError) -> String? {
        var hasUppercase = false
        for byte in bytes {
            if byte >= 0x80 { return nil }
            if byte <= 0x20 || byte == 0x7F { throw .disallowed(Unicode.Scalar(byte)) }
            if isASCIIUppercase(byte) { hasUppercase = true }
        }
        if bytes.isEmpty { throw .empty }
        return hasUppercase ? asciiLowercased(bytes) : String(decoding: bytes, as: UTF8.self)
    }

    /// OpaqueString for ASCII input, or `nil` at the first non-ASCII byte.
    static func asciiOpaqueString(_ bytes: UnsafeBufferPointer<UInt8>) throws(PRECISError)
        -> String?
    {
        for byte in bytes {
            if byte >= 0x80 { return nil }
            if byte < 0x20 || byte == 0x7F { throw .disallowed(Unicode.Scalar(byte)) }
        }
        if bytes.isEmpty { throw .empty }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Unicode paths

    /// UsernameCaseMapped for input known to contain non-ASCII.
    static func usernameCaseMappedUnicode(_ s: Substring) throws(PRECISError) -> String {
        let prepared = widthAndCaseMapped(s).precomposedStringWithCanonicalMapping
        try checkStringClass(Array(prepared.unicodeScalars), .identifier)
        if prepared.isEmpty { throw .empty }
        return prepared
    }

    /// OpaqueString for input known to contain non-ASCII.
    static func opaqueStringUnicode(_ s: Substring) throws(PRECISError) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in s.unicodeScalars {
            let isSpace = scalar.properties.generalCategory == .spaceSeparator
            mapped.append(isSpace ? " " : scalar)
        }
        let prepared = String(mapped).precomposedStringWithCanonicalMapping
        try checkStringClass(Array(prepared.unicodeScalars), .freeform)
        if prepared.isEmpty { throw .empty }
        return prepared
    }

    /// Applies the width mapping rule (RFC 8264 §5.2.2) and then the case
    /// mapping rule (RFC 8264 §5.2.3). Mapping case after width gives the same
    /// result as the reverse order the IDNA mapping of RFC 5895 uses, because
    /// the halfwidth forms have no case and fullwidth letters lowercase to
    /// fullwidth letters.
    static func widthAndCaseMapped(_ s: Substring) -> String {
        // A String grown with `+=` and `unicodeScalars.append`, both in place:
        // `UnicodeScalarView.append(contentsOf:)` builds a new string each
        // call, which made this quadratic in the length of the input.
        var result = ""
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x00...0x7F:
                result.unicodeScalars.append(asciiLowercased(scalar))
            case 0xFF01...0xFF5E:
                // FULLWIDTH EXCLAMATION MARK ... FULLWIDTH TILDE map to ASCII
                // by a fixed offset; lowercase the ASCII result.
                result.unicodeScalars.append(asciiLowercased(Unicode.Scalar(scalar.value - 0xFEE0)!))
            case 0x3000:
                result += " "  // IDEOGRAPHIC SPACE is <wide> U+0020.
            case 0xFF5F...0xFFEE:
                // The remaining <wide> and <narrow> forms. NFKC equals the
                // one-step decomposition mapping except for the halfwidth
                // Hangul jamo and U+FFE3, whose targets decompose further; all
                // of those are disallowed in identifiers and domain labels
                // either way.
                let mapped = String(scalar).precomposedStringWithCompatibilityMapping
                for narrow in mapped.unicodeScalars {
                    result += narrow.properties.lowercaseMapping
                }
            default:
                result += scalar.properties.lowercaseMapping
            }
        }
        return result
    }

    // MARK: ASCII helpers

    @inline(__always)
    static func isASCIIUppercase(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "A") < 26
    }

    /// `scalar` with A-Z turned into a-z; `scalar` must be ASCII.
    private static func asciiLowercased(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        let byte = UInt8(truncatingIfNeeded: scalar.value)
        return Unicode.Scalar(isASCIIUppercase(byte) ? byte | 0x20 : byte)
    }

    /// `bytes` as a string with A-Z turned into a-z; `bytes` must be ASCII.
    static func asciiLowercased(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[index] = isASCIIUppercase(byte) ? byte | 0x20 : byte
            }
            return bytes.count
        }
    }
}

extension Substring {
    /// Calls `body` with the UTF-8 bytes of the substring, without copying
    /// them when the string is stored contiguously (always, for native
    /// strings). `withUTF8` itself only rethrows untyped errors, so the typed
    /// error is carried out in a `Result`.
    func withContiguousUTF8<T, E: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> T
    ) throws(E) -> T {
        var copy = self
        return try copy.withUTF8 { bytes in Result { () throws(E) in try body(bytes) } }.get()
    }
}
