import Testing

@testable import XMPPCore

@Suite struct JIDTests {
    // MARK: RFC 7622 §3.5.1, valid JIDs

    @Test(
        arguments: [
            ("juliet@example.com", "juliet", "example.com", nil),
            ("juliet@example.com/foo", "juliet", "example.com", "foo"),
            ("juliet@example.com/foo bar", "juliet", "example.com", "foo bar"),
            ("juliet@example.com/foo@bar", "juliet", "example.com", "foo@bar"),
            ("foo\\20bar@example.com", "foo\\20bar", "example.com", nil),
            ("fussball@example.com", "fussball", "example.com", nil),
            ("fußball@example.com", "fußball", "example.com", nil),
            ("π@example.com", "π", "example.com", nil),
            ("Σ@example.com/foo", "σ", "example.com", "foo"),
            ("σ@example.com/foo", "σ", "example.com", "foo"),
            ("ς@example.com/foo", "ς", "example.com", "foo"),
            ("king@example.com/♚", "king", "example.com", "♚"),
            ("example.com", nil, "example.com", nil),
            ("example.com/foobar", nil, "example.com", "foobar"),
            ("a.example.com/b@example.net", nil, "a.example.com", "b@example.net"),
        ] as [(String, String?, String, String?)])
    func rfc7622ValidExamples(input: String, local: String?, domain: String, resource: String?)
        throws
    {
        let jid = try JID(input)
        #expect(jid.localpart == local)
        #expect(jid.domainpart == domain)
        #expect(jid.resourcepart == resource)
    }

    // MARK: RFC 7622 §3.5.2, invalid JIDs

    @Test(arguments: [
        ("\"juliet\"@example.com", JIDError(.localpart, .disallowed("\""))),
        ("foo bar@example.com", JIDError(.localpart, .disallowed(" "))),
        ("juliet@example.com/", JIDError(.resourcepart, .empty)),
        ("@example.com/", JIDError(.localpart, .empty)),
        ("henry\u{2163}@example.com", JIDError(.localpart, .disallowed("\u{2173}"))),  // lowercased Ⅳ
        ("♚@example.com", JIDError(.localpart, .disallowed("♚"))),
        ("juliet@", JIDError(.domainpart, .empty)),
        ("/foobar", JIDError(.domainpart, .empty)),
    ])
    func rfc7622InvalidExamples(input: String, error: JIDError) {
        #expect(throws: error) { try JID(input) }
    }

    // MARK: Normalization

    @Test(arguments: [
        ("Juliet@Example.COM/Balcony", "juliet@example.com/Balcony"),  // resource keeps case
        ("ＪＵＬＩＥＴ@example.com", "juliet@example.com"),  // fullwidth localpart
        ("juliet@ＥＸＡＭＰＬＥ．ＣＯＭ", "juliet@example.com"),  // fullwidth domain and dot
        ("juliet@example.com/ＡＢ", "juliet@example.com/ＡＢ"),  // resource keeps width
        ("juliet@example.com.", "juliet@example.com"),  // one trailing dot removed
        ("example.com./res", "example.com/res"),
        ("ÉLODIE@ÉCOLE.example", "élodie@école.example"),
        ("juliet@例え。テスト", "juliet@例え.テスト"),  // IDEOGRAPHIC FULL STOP separates labels
        ("juliet@xn--bcher-kva.example", "juliet@bücher.example"),  // A-label to U-label
        ("juliet@XN--BCHER-KVA.example", "juliet@bücher.example"),
        ("juliet@example.com/foo\u{A0}bar", "juliet@example.com/foo bar"),
        ("juliet@example.com/a/b", "juliet@example.com/a/b"),  // only the first '/' splits
        // One non-ASCII part sends the whole JID down the Unicode path; the
        // ASCII parts must come out as they would on the fast path.
        ("Juliet@Example.COM/Résumé", "juliet@example.com/Résumé"),
        ("JULIÉ@Example.COM./Balcony", "julié@example.com/Balcony"),
        ("Bücher.Example.", "bücher.example"),
        ("xn--bcher-kva.BÜCHER.example", "bücher.bücher.example"),
        ("juliet@127.0.0.1", "juliet@127.0.0.1"),
        ("juliet@１２７．０．０．１", "juliet@127.0.0.1"),  // fullwidth digits
        ("[::1]", "[::1]"),
        ("juliet@[2001:DB8:0:0:0:0:0:1]/r", "juliet@[2001:db8::1]/r"),
        ("[2001:0db8:0000:0000:0001:0000:0000:0001]", "[2001:db8::1:0:0:1]"),
        ("[::FFFF:192.0.2.1]", "[::ffff:192.0.2.1]"),
    ])
    func normalizes(input: String, expected: String) throws {
        let jid = try JID(input)
        #expect(Array(jid.description.utf8) == Array(expected.utf8), "\(input) -> \(jid)")
    }

    @Test func nfdInputEqualsNFCInput() throws {
        let decomposed = try JID("e\u{301}lodie@e\u{301}cole.example/re\u{301}sume\u{301}")
        let composed = try JID("\u{E9}lodie@\u{E9}cole.example/r\u{E9}sum\u{E9}")
        #expect(decomposed == composed)
        #expect(decomposed.hashValue == composed.hashValue)
        #expect(Array(decomposed.description.utf8) == Array(composed.description.utf8))
        #expect(decomposed.localpart?.unicodeScalars.count == 6)
    }

    @Test func differentlyWrittenEqualJIDsAreOneSetElement() throws {
        let spellings = [
            "juliet@example.com/balcony", "Juliet@Example.com/balcony",
            "juliet@example.com./balcony", "ＪＵＬＩＥＴ@example.com/balcony",
            "juliet@EXAMPLE.COM/balcony",
        ]
        let jids = Set(try spellings.map { try JID($0) })
        #expect(jids.count == 1)
        #expect(try JID("juliet@example.com/Balcony") != JID("juliet@example.com/balcony"))
        #expect(try JID("juliet@example.com") != JID("juliet@example.com/balcony"))
    }

    @Test func separatorsAreFoundBeforeMapping() throws {
        // FULLWIDTH COMMERCIAL AT is not a separator; once widened it is a
        // character the domainpart may not contain.
        #expect(throws: JIDError(.domainpart, .disallowed("@"))) { try JID("ｊｕｌｉｅｔ＠example.com") }
        // FULLWIDTH SOLIDUS in a resourcepart stays as it is.
        #expect(try JID("example.com/a／b").resourcepart == "a／b")
        // A combining mark right after '/' belongs to the resourcepart.
        #expect(try JID("juliet@example.com/\u{301}foo").resourcepart == "\u{301}foo")
    }

    // MARK: Invalid parts

    @Test(arguments: [
        ("juliet\u{0}@example.com", JIDError(.localpart, .disallowed("\u{0}"))),
        ("juliet@exa\u{0}mple.com", JIDError(.domainpart, .disallowed("\u{0}"))),
        ("juliet@example.com/\u{0}", JIDError(.resourcepart, .disallowed("\u{0}"))),
        ("jul\tiet@example.com", JIDError(.localpart, .disallowed("\t"))),
        ("juliet@example.com/a\nb", JIDError(.resourcepart, .disallowed("\n"))),
        ("juliet@example.com/a\u{200B}b", JIDError(.resourcepart, .disallowed("\u{200B}"))),
        ("ju&liet@example.com", JIDError(.localpart, .disallowed("&"))),
        ("ju'liet@example.com", JIDError(.localpart, .disallowed("'"))),
        ("ju:liet@example.com", JIDError(.localpart, .disallowed(":"))),
        ("ju<liet@example.com", JIDError(.localpart, .disallowed("<"))),
        ("ju>liet@example.com", JIDError(.localpart, .disallowed(">"))),
        ("ju\"lié@example.com", JIDError(.localpart, .disallowed("\""))),
        ("a@b@example.com", JIDError(.domainpart, .disallowed("@"))),
        ("exa mple.com", JIDError(.domainpart, .disallowed(" "))),
        ("ex_ample.com", JIDError(.domainpart, .disallowed("_"))),
        ("example..com", JIDError(.domainpart, .emptyLabel)),
        ("example.com..", JIDError(.domainpart, .emptyLabel)),
        (".example.com", JIDError(.domainpart, .emptyLabel)),
        (".", JIDError(.domainpart, .empty)),
        ("-example.com", JIDError(.domainpart, .hyphenAtLabelEdge)),
        ("example-.com", JIDError(.domainpart, .hyphenAtLabelEdge)),
        ("bücher-.example", JIDError(.domainpart, .hyphenAtLabelEdge)),
        ("♚.example", JIDError(.domainpart, .disallowed("♚"))),
        ("exam\u{200B}ple.example", JIDError(.domainpart, .disallowed("\u{200B}"))),
        ("\u{301}a.example", JIDError(.domainpart, .contextRule("\u{301}"))),
        ("xn--9.example", JIDError(.domainpart, .invalidALabel("xn--9"))),
        ("xn--ls8h.example", JIDError(.domainpart, .disallowed("\u{1F4A9}"))),
        // A-labels are DNS labels: 63 octets at most (this one would decode).
        ("xn--" + String(repeating: "a", count: 59) + "-kva.example",
         JIDError(.domainpart, .invalidALabel("xn--" + String(repeating: "a", count: 59) + "-kva"))),
        ("256.0.0.1", JIDError(.domainpart, .invalidIPLiteral("256.0.0.1"))),
        ("1.2.3", JIDError(.domainpart, .invalidIPLiteral("1.2.3"))),
        ("01.2.3.4", JIDError(.domainpart, .invalidIPLiteral("01.2.3.4"))),
        ("[::1", JIDError(.domainpart, .invalidIPLiteral("[::1"))),
        ("[]", JIDError(.domainpart, .invalidIPLiteral("[]"))),
        ("[1.2.3.4]", JIDError(.domainpart, .invalidIPLiteral("[1.2.3.4]"))),
        ("[fe80::1%eth0]", JIDError(.domainpart, .invalidIPLiteral("[fe80::1%eth0]"))),
        ("[::1]x", JIDError(.domainpart, .invalidIPLiteral("[::1]x"))),
        ("[::ü]", JIDError(.domainpart, .invalidIPLiteral("[::ü]"))),
        ("[1::2::3]", JIDError(.domainpart, .invalidIPLiteral("[1::2::3]"))),
    ])
    func rejects(input: String, error: JIDError) {
        #expect(throws: error) { try JID(input) }
    }

    // MARK: Lengths (1 to 1023 bytes per prepared part)

    @Test func partsUpTo1023BytesAreAccepted() throws {
        let part = String(repeating: "a", count: 1023)
        let jid = try JID("\(part)@\(part)/\(part)")
        #expect(jid.localpart?.utf8.count == 1023)
        #expect(jid.domainpart.utf8.count == 1023)
        #expect(jid.resourcepart?.utf8.count == 1023)
    }

    @Test(arguments: [JIDError.Part.localpart, .domainpart, .resourcepart])
    func partsOf1024BytesAreRejected(part: JIDError.Part) {
        let ok = "a"
        let long = String(repeating: "a", count: 1024)
        let input =
            switch part {
            case .localpart: "\(long)@\(ok)/\(ok)"
            case .domainpart: "\(ok)@\(long)/\(ok)"
            case .resourcepart: "\(ok)@\(ok)/\(long)"
            }
        #expect(throws: JIDError(part, .tooLong)) { try JID(input) }
    }

    @Test func lengthIsMeasuredAfterPreparation() throws {
        // 511 two-byte letters plus one ASCII letter: 1023 bytes.
        let cyrillic = String(repeating: "ж", count: 511)
        #expect(try JID("\(cyrillic)a@example.com").localpart?.utf8.count == 1023)
        #expect(throws: JIDError(.localpart, .tooLong)) { try JID("\(cyrillic)ж@example.com") }
        // 1023 fullwidth letters are 3069 bytes of input but 1023 once mapped.
        let fullwidth = String(repeating: "ａ", count: 1023)
        #expect(try JID("\(fullwidth)@example.com").localpart?.utf8.count == 1023)
        #expect(throws: JIDError(.localpart, .tooLong)) { try JID("\(fullwidth)ａ@example.com") }
        // Far too long input is rejected before any mapping.
        let huge = String(repeating: "ａ", count: 100_000)
        #expect(throws: JIDError(.domainpart, .tooLong)) { try JID(huge) }
    }

    // MARK: Building and deriving

    @Test func initFromPartsPreparesEachPart() throws {
        let jid = try JID(localpart: "Juliet", domainpart: "Example.COM.", resourcepart: "a@b/c")
        #expect(jid.description == "juliet@example.com/a@b/c")
        #expect(try JID(localpart: nil, domainpart: "example.com").description == "example.com")
        #expect(throws: JIDError(.localpart, .disallowed("@"))) {
            try JID(localpart: "a@b", domainpart: "example.com")
        }
        #expect(throws: JIDError(.localpart, .disallowed("/"))) {
            try JID(localpart: "a/b", domainpart: "example.com")
        }
        #expect(throws: JIDError(.localpart, .disallowed("@"))) {
            try JID(localpart: "a＠b", domainpart: "example.com")  // widened to '@'
        }
        #expect(throws: JIDError(.domainpart, .disallowed("/"))) {
            try JID(localpart: nil, domainpart: "example.com/x")
        }
        #expect(throws: JIDError(.localpart, .empty)) {
            try JID(localpart: "", domainpart: "example.com")
        }
    }

    @Test func bareAndWithResource() throws {
        let full = try JID("juliet@example.com/balcony")
        #expect(!full.isBare)
        #expect(full.bare == (try JID("juliet@example.com")))
        #expect(full.bare.isBare)
        #expect(full.bare.bare == full.bare)
        let moved = try full.withResource("Chamber\u{A0}2")
        #expect(moved.description == "juliet@example.com/Chamber 2")
        #expect(moved.bare == full.bare)
        #expect(throws: JIDError(.resourcepart, .empty)) { try full.withResource("") }
        #expect(throws: JIDError(.resourcepart, .disallowed("\u{7}"))) {
            try full.withResource("\u{7}")
        }
    }

    @Test func sortsByDomainThenLocalThenResource() throws {
        let sorted = try ["b@a.example/r", "a.example", "b.example", "a@a.example", "b@a.example"]
            .map { try JID($0) }.sorted().map(\.description)
        #expect(
            sorted == ["a.example", "a@a.example", "b@a.example", "b@a.example/r", "b.example"])
    }

    @Test func errorsSayWhichPartAndWhy() {
        #expect(
            JIDError(.localpart, .disallowed(" ")).description
                == "invalid localpart: disallowed character U+0020")
        #expect(
            JIDError(.resourcepart, .tooLong).description
                == "invalid resourcepart: it is longer than 1023 bytes")
        #expect(
            JIDError(.domainpart, .invalidIPLiteral("[::1")).description
                == "invalid domainpart: '[::1' is not a valid IP address")
    }
}
