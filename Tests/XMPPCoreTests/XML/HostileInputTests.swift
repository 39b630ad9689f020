import Testing
@testable import XMPPCore

/// Hostile and broken input: each must end the stream with its specific
/// error, without expanding, buffering or recursing without bound.
@Suite struct HostileInputTests {
    /// Feeds `clientHeader` then `payload`, returning the error kind.
    private func kind(after payload: [UInt8], limits: XMLStreamParser.Limits = .init()) -> XMLStreamError.Kind? {
        let parser = XMLStreamParser(limits: limits)
        #expect(parser.feed(clientHeader).count == 1)
        return errorKind(parser.feed(payload))
    }

    private func kind(after payload: String) -> XMLStreamError.Kind? {
        kind(after: Array(payload.utf8))
    }

    @Test(arguments: [
        "<message><body>hi</mess>",  // mismatched end tag
        "<message to='a' to='b'/>",  // duplicate attribute
        "<message to=a/>",  // unquoted attribute
        "<message><body>&foo;</body></message>",  // undefined entity
        "<message><body>&#0;</body></message>",  // reference to an invalid character
        "<message><body>&#x1;</body></message>",
        "<message><body>&#xD800;</body></message>",  // surrogate
        "<message <body/>",
        "</message>",  // end tag with nothing open
        "<message><![CDATA[x]]></body></message>",
    ])
    func malformedXMLIsNotWellFormed(_ payload: String) {
        #expect(kind(after: payload) == .notWellFormed)
    }

    @Test(arguments: [
        [0xC3, 0x28],  // bad continuation byte
        [0x80],  // lone continuation byte
        [0xED, 0xA0, 0x80],  // encoded surrogate
        [0xC0, 0xAF],  // overlong '/'
        [0xF4, 0x90, 0x80, 0x80],  // beyond U+10FFFF
        [0xFF],
        [0x00],  // NUL
        [0x01],  // control character
    ] as [[UInt8]])
    func invalidUTF8AndControlsInTextAreNotWellFormed(_ bad: [UInt8]) {
        let payload = Array("<message><body>".utf8) + bad + Array("</body></message>".utf8)
        #expect(kind(after: payload) == .notWellFormed)
    }

    @Test func nulInsideATagIsNotWellFormed() {
        #expect(kind(after: Array("<mess".utf8) + [0] + Array("age/>".utf8)) == .notWellFormed)
    }

    @Test(arguments: [
        ("<!-- a comment --><presence/>", "comment"),
        ("<message><!-- inside --></message>", "comment"),
        ("<?php evil() ?><presence/>", "processing instruction"),
        ("<message><?target data?></message>", "processing instruction"),
    ])
    func restrictedConstructsMidStream(_ payload: String, _ what: String) {
        #expect(kind(after: payload) == .restrictedXML, "\(what)")
    }

    @Test func doctypeBeforeTheStreamIsRestricted() {
        let parser = XMLStreamParser()
        let events = parser.feed("<?xml version='1.0'?><!DOCTYPE stream><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>")
        #expect(errorKind(events) == .restrictedXML)
        #expect(events.count == 1, "no header is reported after a DOCTYPE")
    }

    /// The "billion laughs": ten levels of ten-fold entity expansion would
    /// be 10^9 copies; the DTD is refused before any entity is declared.
    @Test func billionLaughsIsRejectedNotExpanded() {
        var document = "<?xml version='1.0'?><!DOCTYPE lolz [<!ENTITY lol 'lol'>"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            document += "<!ENTITY lol\(level) '" + String(repeating: "&\(previous);", count: 10) + "'>"
        }
        document += "]><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>&lol9;</stream:stream>"
        let parser = XMLStreamParser()
        #expect(errorKind(parser.feed(document)) == .restrictedXML)
    }

    @Test func externalEntityIsRejected() {
        let parser = XMLStreamParser()
        let events = parser.feed(
            "<!DOCTYPE x [<!ENTITY xxe SYSTEM 'file:///etc/passwd'>]><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>&xxe;")
        #expect(errorKind(events) == .restrictedXML)
    }

    @Test func entityReferenceWithoutDeclarationIsNotWellFormed() {
        #expect(kind(after: "<message><body>&xxe;</body></message>") == .notWellFormed)
    }

    /// A 10 MB stanza in one read: refused once the limit is passed, and the
    /// rest of the read is never handed to Expat.
    @Test func tenMegabyteStanzaInOneReadIsPolicyViolation() {
        let payload = Array("<message><body>".utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 10_000_000)
        #expect(kind(after: payload) == .policyViolation)
    }

    /// The same stanza trickling in: refused as soon as the limit is passed.
    @Test func tenMegabyteStanzaInSmallReadsIsPolicyViolation() {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: 64 * 1024))
        _ = parser.feed(clientHeader)
        _ = parser.feed("<message><body>")
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 4096)
        var fed = 0
        var outcome: XMLStreamError.Kind?
        while fed < 10_000_000, outcome == nil {
            outcome = errorKind(parser.feed(chunk))
            fed += chunk.count
        }
        #expect(outcome == .policyViolation)
        #expect(fed <= 64 * 1024 + chunk.count, "refused within one read of the limit")
    }

    /// A start tag that never ends (one huge attribute value) holds no
    /// callback back; the byte count still stops it.
    @Test func hugeAttributeValueIsPolicyViolation() {
        let payload = Array("<message to='".utf8) + [UInt8](repeating: UInt8(ascii: "b"), count: 2_000_000)
        #expect(kind(after: payload) == .policyViolation)
    }

    @Test func hugeAttributeValueTricklingInIsPolicyViolation() {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: 16 * 1024))
        _ = parser.feed(clientHeader)
        _ = parser.feed("<message to='")
        var outcome: XMLStreamError.Kind?
        var fed = 0
        while outcome == nil, fed < 1_000_000 {
            outcome = errorKind(parser.feed([UInt8](repeating: UInt8(ascii: "b"), count: 100)))
            fed += 100
        }
        #expect(outcome == .policyViolation)
    }

    /// Expat rescans an unfinished start tag on every feed; the token bound
    /// keeps a trickled start tag from costing quadratic time.
    @Test func startTagLargerThanTheTokenLimitIsPolicyViolation() {
        let limits = XMLStreamParser.Limits(maxTokenSize: 4096)
        let fits = "<message id='" + String(repeating: "i", count: 4000) + "'/>"
        let parser = XMLStreamParser(limits: limits)
        _ = parser.feed(clientHeader)
        #expect(parser.feed(fits).count == 1)
        let tooBig = "<message id='" + String(repeating: "i", count: 5000) + "'/>"
        #expect(kind(after: Array(tooBig.utf8), limits: limits) == .policyViolation)
    }

    /// A token over the bound is refused while it arrives in pieces, so it
    /// is refused when it arrives in one piece too, whatever markup it is.
    @Test(arguments: [
        clientHeader + "<message></message" + String(repeating: " ", count: 2000) + ">",
        clientHeader + "<message><body>&#" + String(repeating: "0", count: 2000) + "65;</body></message>",
        "<?xml version='1.0'" + String(repeating: " ", count: 2000) + "?>" + clientHeader,
    ])
    func tokenLargerThanTheLimitIsPolicyViolationHoweverItArrives(_ stream: String) {
        let bytes = Array(stream.utf8)
        let limits = XMLStreamParser.Limits(maxTokenSize: 1024)
        #expect(errorKind(XMLStreamParser(limits: limits).feed(bytes)) == .policyViolation)
        let split = XMLStreamParser(limits: limits)
        let events = split.feed(Array(bytes.dropLast(500))) + split.feed(Array(bytes.suffix(500)))
        #expect(errorKind(events) == .policyViolation)
    }

    /// Text is reported as it arrives, so a long body trickling in byte by
    /// byte is fine whatever the token bound.
    @Test func longTextTricklingInIsNotBoundByTheTokenLimit() {
        let parser = XMLStreamParser(limits: .init(maxTokenSize: 1024))
        _ = parser.feed(clientHeader)
        var events = parser.feed("<message><body>")
        for _ in 0..<20_000 { events += parser.feed([UInt8(ascii: "z")]) }
        events += parser.feed("</body></message>")
        guard case .element(let message)? = events.first, events.count == 1 else {
            Issue.record("expected one message, got \(events.count) events")
            return
        }
        #expect(message.childText("body")?.utf8.count == 20_000)
    }

    @Test func hundredThousandDeepNestingIsPolicyViolation() {
        let payload = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        #expect(kind(after: payload) == .policyViolation)
    }

    @Test func tooManyAttributesIsPolicyViolation() {
        let payload = "<presence" + (0..<10_000).map { " a\($0)='v'" }.joined() + "/>"
        #expect(kind(after: payload) == .policyViolation)
    }

    @Test func oversizeStreamHeaderIsPolicyViolation() {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: 4096))
        let header = "<stream:stream xmlns:stream='http://etherx.jabber.org/streams' to='"
            + String(repeating: "x", count: 8192) + "'>"
        #expect(errorKind(parser.feed(header)) == .policyViolation)
    }

    @Test func endlessWhitespaceIsNotCountedAsAStanza() {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: 1024))
        _ = parser.feed(clientHeader)
        for _ in 0..<100 { #expect(parser.feed(String(repeating: " ", count: 512)).isEmpty) }
        #expect(parser.feed("<presence/>").count == 1)
    }

    @Test func secondXMLDeclarationMidStreamIsNotWellFormed() {
        let kind = kind(after: "<?xml version='1.0'?><presence/>")
        #expect(kind == .notWellFormed || kind == .restrictedXML)
    }

    @Test(arguments: [[0xFE, 0xFF, 0x00, 0x3C], [0xFF, 0xFE, 0x3C, 0x00]] as [[UInt8]])
    func utf16IsUnsupportedEncoding(_ start: [UInt8]) {
        let parser = XMLStreamParser()
        #expect(errorKind(parser.feed(start)) == .unsupportedEncoding)
    }

    /// Expat takes a NUL among the first two bytes for UTF-16 without a byte
    /// order mark, whatever encoding it was told, if both bytes come in one
    /// feed; a stream in UTF-16LE was then parsed as such.
    @Test(arguments: [
        "<stream:stream xmlns:stream='http://etherx.jabber.org/streams'>",
        "<?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>",
    ])
    func utf16WithoutAByteOrderMarkIsUnsupportedEncoding(_ header: String) {
        let littleEndian = header.utf16.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] }
        let bigEndian = header.utf16.flatMap { [UInt8($0 >> 8), UInt8(truncatingIfNeeded: $0)] }
        for bytes in [littleEndian, bigEndian] {
            #expect(errorKind(XMLStreamParser().feed(bytes)) == .unsupportedEncoding)
            let split = XMLStreamParser()
            let events = split.feed(Array(bytes.prefix(1))) + split.feed(Array(bytes.dropFirst()))
            #expect(errorKind(events) == .unsupportedEncoding)
        }
    }

    /// Expat would find the invalid first byte if it came alone, and take
    /// the two for UTF-16 if they came together; the answer must not
    /// depend on that.
    @Test func theFirstTwoBytesAreJudgedTogetherWhereverTheStreamIsSplit() {
        let bytes: [UInt8] = [0x8A, 0x00, 0x3C, 0x00]
        let whole = XMLStreamParser().feed(bytes)
        for cut in 0...bytes.count {
            let parser = XMLStreamParser()
            let split = parser.feed(Array(bytes[..<cut])) + parser.feed(Array(bytes[cut...]))
            #expect(errorKind(split) == errorKind(whole), "cut at \(cut)")
        }
        #expect(errorKind(whole) == .unsupportedEncoding)
    }
}

@Suite struct XMLStreamErrorMappingTests {
    @Test(arguments: [
        (XMLStreamError.Kind.notWellFormed, "not-well-formed"),
        (.restrictedXML, "restricted-xml"),
        (.policyViolation, "policy-violation"),
        (.badNamespacePrefix, "bad-namespace-prefix"),
        (.unsupportedEncoding, "unsupported-encoding"),
        (.badFormat, "bad-format"),
    ])
    func parserFailuresMapToTheirStreamErrors(_ kind: XMLStreamError.Kind, _ wire: String) {
        let error = XMLStreamError(kind, "detail").streamError
        #expect(error.condition.rawValue == wire)
        #expect(error.text == "detail")
    }
}
