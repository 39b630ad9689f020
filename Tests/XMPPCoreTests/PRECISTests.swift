import Testing

@testable import XMPPCore

/// Compares by UTF-8 bytes: Swift's `==` on strings treats canonically
/// equivalent strings as equal, which would hide a missing NFC step.
private func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
    Array(lhs.utf8) == Array(rhs.utf8)
}

@Suite struct PRECISTests {
    // MARK: UsernameCaseMapped (RFC 8265 §3.3)

    @Test(arguments: [
        ("juliet", "juliet"),
        ("Juliet", "juliet"),
        ("JULIET", "juliet"),
        ("foo\\20bar", "foo\\20bar"),  // printable ASCII is allowed
        ("ＪＵＬＩＥＴ", "juliet"),  // fullwidth to ASCII, then lowercase
        ("ｶﾀｶﾅ", "カタカナ"),  // halfwidth katakana widened
        ("fußball", "fußball"),  // ß is PVALID by exception, not case folded
        ("Σ", "σ"),
        ("ς", "ς"),
        ("ΣΑΣ", "σασ"),  // no Final_Sigma context rule
        ("π", "π"),
        ("e\u{301}", "\u{E9}"),  // NFD input comes out NFC
        ("\u{1100}\u{1161}", "\u{AC00}"),  // conjoining jamo compose to a syllable
        ("İ", "i\u{307}"),  // full lowercase mapping
        ("۱۲۳", "۱۲۳"),  // Extended Arabic-Indic digits (CONTEXTO rule holds)
        ("١٢٣", "١٢٣"),  // Arabic-Indic digits
        ("col·lecció", "col·lecció"),  // MIDDLE DOT between two l
        ("क्\u{200D}", "क्\u{200D}"),  // ZWJ after a virama
        ("ア・イ", "ア・イ"),  // KATAKANA MIDDLE DOT next to katakana
        ("・・ア", "・・ア"),  // the kana may come after every dot
        ("a١b١c١", "a١b١c١"),
        ("ロミオ", "ロミオ"),
    ])
    func usernameCaseMappedAccepts(input: String, expected: String) throws {
        let result = try PRECIS.usernameCaseMapped(input)
        #expect(sameBytes(result, expected), "\(input) -> \(result)")
    }

    @Test(arguments: [
        ("", PRECISError.empty),
        (" ", .disallowed(" ")),
        ("foo bar", .disallowed(" ")),
        ("foo\u{3000}bar", .disallowed(" ")),  // IDEOGRAPHIC SPACE widens to a space
        // ROMAN NUMERAL FOUR lowercases to SMALL ROMAN NUMERAL FOUR, which has
        // a compatibility mapping (to "iv"); errors name the mapped code point.
        ("henry\u{2163}", .disallowed("\u{2173}")),
        ("\u{FB01}x", .disallowed("\u{FB01}")),  // LATIN SMALL LIGATURE FI
        ("♚", .disallowed("♚")),  // symbol
        ("a—b", .disallowed("—")),  // non-ASCII punctuation
        ("\u{0}", .disallowed("\u{0}")),
        ("a\u{7}b", .disallowed("\u{7}")),
        ("a\u{7F}", .disallowed("\u{7F}")),
        ("a\u{85}b", .disallowed("\u{85}")),  // C1 control
        ("a\u{200B}b", .disallowed("\u{200B}")),  // ZERO WIDTH SPACE, default-ignorable
        ("a\u{E000}", .disallowed("\u{E000}")),  // private use
        ("\u{1100}", .disallowed("\u{1100}")),  // old Hangul jamo on its own
        ("a\u{0378}", .unassigned("\u{0378}")),
        ("a\u{200D}b", .contextRule("\u{200D}")),  // ZWJ without a virama
        ("a·b", .contextRule("·")),
        ("١۲", .contextRule("١")),  // the two Arabic digit sets may not mix
        ("١١١a۲", .contextRule("١")),  // not even far apart
        ("۲a١", .contextRule("۲")),
        ("a・b", .contextRule("・")),  // KATAKANA MIDDLE DOT without kana or Han
    ])
    func usernameCaseMappedRejects(input: String, error: PRECISError) {
        #expect(throws: error) { try PRECIS.usernameCaseMapped(input) }
    }

    @Test func usernameLengthIsNotLimitedByThePRECISProfile() throws {
        let long = String(repeating: "A", count: 5000)
        #expect(try PRECIS.usernameCaseMapped(long) == String(repeating: "a", count: 5000))
    }

    /// The whole-string rules (RFC 5892 A.7 to A.9) look at the string once,
    /// not once per digit: 200 000 digits take milliseconds, where a scan per
    /// digit would take minutes and hit the time limit.
    @Test(.timeLimit(.minutes(1))) func contextRulesStayLinearInTheStringLength() throws {
        let digits = String(repeating: "\u{0660}\u{06F0}", count: 100_000)
        #expect(throws: PRECISError.contextRule("\u{0660}")) { try PRECIS.opaqueString(digits) }
        let valid = String(repeating: "\u{0660}", count: 200_000)
        #expect(try PRECIS.opaqueString(valid).unicodeScalars.count == 200_000)
        #expect(try PRECIS.usernameCaseMapped(valid).unicodeScalars.count == 200_000)
    }

    /// Width and case mapping grow the result in place: 2 MiB of non-ASCII
    /// letters take about a second, where copying the result once per code
    /// point (as appending to a `UnicodeScalarView` does) took minutes.
    @Test(.timeLimit(.minutes(1))) func caseMappingStaysLinearInTheStringLength() throws {
        let long = String(repeating: "\u{C9}", count: 1 << 20)
        #expect(try PRECIS.usernameCaseMapped(long) == String(repeating: "\u{E9}", count: 1 << 20))
    }

    // MARK: OpaqueString (RFC 8265 §4.2)

    @Test(arguments: [
        ("correct horse battery staple", "correct horse battery staple"),
        ("Πassword", "Πassword"),  // case is kept
        ("ＡＢ", "ＡＢ"),  // width is kept
        ("pass\u{A0}word", "pass word"),  // NO-BREAK SPACE to space
        ("pass\u{3000}word", "pass word"),  // IDEOGRAPHIC SPACE to space
        ("pass\u{2003}word", "pass word"),  // EM SPACE to space
        ("♚ henry\u{2163} ﬁ", "♚ henry\u{2163} ﬁ"),  // symbols and compat characters are fine
        ("e\u{301}", "\u{E9}"),
        (" ", " "),
    ])
    func opaqueStringAccepts(input: String, expected: String) throws {
        let result = try PRECIS.opaqueString(input)
        #expect(sameBytes(result, expected), "\(input) -> \(result)")
    }

    @Test(arguments: [
        ("", PRECISError.empty),
        ("\u{0}", .disallowed("\u{0}")),
        ("pass\tword", .disallowed("\t")),
        ("pass\u{7F}", .disallowed("\u{7F}")),
        ("pass\u{200B}word", .disallowed("\u{200B}")),
        ("pass\u{2028}", .disallowed("\u{2028}")),  // LINE SEPARATOR
        ("pass\u{E000}", .disallowed("\u{E000}")),
        ("pass\u{0378}", .unassigned("\u{0378}")),
        ("a\u{200C}b", .contextRule("\u{200C}")),
    ])
    func opaqueStringRejects(input: String, error: PRECISError) {
        #expect(throws: error) { try PRECIS.opaqueString(input) }
    }

    @Test(arguments: [0xFDD0, 0xFFFF, 0x1FFFE] as [UInt32])
    func noncharactersAreRejectedByBothProfiles(value: UInt32) {
        // Swift string literals cannot spell noncharacters, so build them.
        let scalar = Unicode.Scalar(value)!
        let input = "a" + String(scalar)
        #expect(throws: PRECISError.disallowed(scalar)) { try PRECIS.usernameCaseMapped(input) }
        #expect(throws: PRECISError.disallowed(scalar)) { try PRECIS.opaqueString(input) }
    }

    @Test func asciiAndUnicodePathsAgreeOnASCII() throws {
        // "é" forces the Unicode path; the ASCII part must come out the same.
        let viaUnicode = try PRECIS.usernameCaseMapped("Romeo.Montague+Test-1_é")
        let viaASCII = try PRECIS.usernameCaseMapped("Romeo.Montague+Test-1_")
        #expect(sameBytes(viaUnicode, viaASCII + "é"))
    }

    @Test func errorsDescribeTheCodePoint() {
        #expect(
            PRECISError.disallowed("\u{2163}").description == "disallowed code point U+2163 'Ⅳ'")
        #expect(PRECISError.disallowed("\u{7}").description == "disallowed code point U+0007")
        #expect(PRECISError.empty.description == "the string is empty")
    }
}
