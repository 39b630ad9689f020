import Testing
@testable import XMPPCore

/// A client stream opening as XMPPFramework and most clients write it.
let clientHeader = """
    <?xml version='1.0'?><stream:stream xmlns='jabber:client' \
    xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='example.com' xml:lang='en'>
    """

@Suite struct XMLStreamParserTests {
    @Test func reportsHeaderStanzasAndClose() throws {
        let parser = XMLStreamParser()
        let events = parser.feed(
            clientHeader + "<message to='juliet@example.com' type='chat'><body>Wherefore?</body></message>"
                + "</stream:stream>")
        #expect(events.count == 3)
        guard case .streamOpen(let header) = events[0] else {
            Issue.record("expected a header, got \(events[0])")
            return
        }
        #expect(header.name == "stream")
        #expect(header.namespace == "http://etherx.jabber.org/streams")
        #expect(header.defaultNamespace == "jabber:client")
        #expect(header.prefixes == ["stream": "http://etherx.jabber.org/streams"])
        #expect(header[attribute: "to"] == "example.com")
        #expect(header[attribute: "version"] == "1.0")
        #expect(header[attribute: "lang", namespace: "http://www.w3.org/XML/1998/namespace"] == "en")

        var body = Element("body", namespace: "jabber:client")
        body.append(text: "Wherefore?")
        let message = Element(
            "message", namespace: "jabber:client",
            attributes: ["to": "juliet@example.com", "type": "chat"], children: [.element(body)])
        #expect(events[1] == .element(message))
        #expect(events[2] == .streamClose)
    }

    /// Nothing after the close is read, so it cannot matter how it
    /// arrives: Expat takes a trailing `m:` for an unfinished name when it
    /// comes with the close, and for junk when it comes a byte at a time
    /// (the stream fuzzer's finding).
    @Test func whatFollowsTheCloseIsNotReadHoweverItArrives() {
        let whole = XMLStreamParser().feed(clientHeader + "</stream:stream>m:<message/>")
        let split = XMLStreamParser()
        var pieces = split.feed(clientHeader + "</stream:stream>")
        for byte in "m:<message/>".utf8 { pieces += split.feed([byte]) }
        #expect(whole.count == 2)
        #expect(whole.last == .streamClose)
        #expect(pieces == whole)
        split.reset()
        #expect(split.feed(clientHeader).count == 1, "reset opens the parser again")
    }

    @Test func resolvesDefaultAndPrefixedNamespaces() {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        let events = parser.feed(
            "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>"
                + "<x:c xmlns:x='urn:example:x' x:a='1' b='2'/></stream:features>")
        guard case .element(let features) = events.first else {
            Issue.record("expected an element, got \(events)")
            return
        }
        #expect(features.name == "features")
        #expect(features.namespace == "http://etherx.jabber.org/streams")
        let starttls = features.child("starttls", namespace: "urn:ietf:params:xml:ns:xmpp-tls")
        #expect(starttls?.child("required") != nil)
        let custom = features.child("c", namespace: "urn:example:x")
        #expect(custom?[attribute: "a", namespace: "urn:example:x"] == "1")
        #expect(custom?[attribute: "b"] == "2")
        #expect(custom?[attribute: "a"] == nil)
    }

    @Test func mergesTextAndExpandsPredefinedAndCharacterReferences() {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        let events = parser.feed(
            "<message><body>a &amp; b &lt;c&gt; &#x1F600;&#233;\n<![CDATA[<raw>&]]>tail</body></message>")
        guard case .element(let message) = events.first else {
            Issue.record("expected an element, got \(events)")
            return
        }
        let body = message.child("body")
        #expect(body?.children == [.text("a & b <c> 😀é\n<raw>&tail")])
    }

    /// The same stream cut in two at every byte offset, and fed one byte at
    /// a time, gives exactly the events of feeding it whole.
    @Test func anySplitPointGivesTheSameEvents() {
        let stream = clientHeader
            + "<message type='chat'><body>Grüße ♚ 😀 日本語</body><thread>t1</thread></message> \n"
            + "<presence><show>away</show><status>Zzz…</status></presence>"
            + "<iq type='get' id='r1'><query xmlns='jabber:iq:roster'/></iq></stream:stream>"
        let bytes = Array(stream.utf8)
        let whole = XMLStreamParser().feed(bytes)
        #expect(whole.count == 5)
        for cut in 0...bytes.count {
            let parser = XMLStreamParser()
            let events = parser.feed(Array(bytes[..<cut])) + parser.feed(Array(bytes[cut...]))
            #expect(events == whole, "split at \(cut)")
        }
        let parser = XMLStreamParser()
        let byteByByte = bytes.flatMap { parser.feed([$0]) }
        #expect(byteByByte == whole)
    }

    /// A long namespace bound to a prefix once and used by many small
    /// elements or attributes would be declared again on each of them when
    /// the stanza is written out: that growth counts against the stanza
    /// limit, so output stays linear in input.
    @Test(arguments: ["<p:b/>", "<b p:a=''/>"])
    func namespacesWrittenOutCountAgainstTheStanzaLimit(_ use: String) throws {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: 64 << 10))
        _ = parser.feed("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>")
        let long = "urn:" + String(repeating: "n", count: 4000)
        let uses = String(repeating: use, count: 100)  // 600 bytes on the wire, ~400 KB written out
        let events = parser.feed("<message><x xmlns:p='\(long)'>\(uses)</x></message>")
        guard case .error(let error)? = events.last else { Issue.record("accepted: \(events)"); return }
        #expect(error.kind == .policyViolation)

        let fits = XMLStreamParser(limits: .init(maxStanzaSize: 64 << 10))
        _ = fits.feed("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>")
        let few = String(repeating: use, count: 5)
        guard case .element(let element)? = fits.feed("<message><x xmlns:p='\(long)'>\(few)</x></message>").first
        else { Issue.record("a stanza within the limit was refused"); return }
        #expect(try XMLSerializer.bytes(element).count <= 64 << 10)
    }

    /// Namespaces a peer declares inline on each element are paid for in
    /// its own input: a stanza that fits the limit as sent is accepted.
    @Test func inlineNamespaceDeclarationsDoNotCountTwice() {
        let children = String(repeating: "<x xmlns='urn:test:child'/>", count: 1000)  // 27 KB
        #expect(acceptedNearItsSize("<message>\(children)</message>")?.elements.count == 1000)
    }

    /// Elements in the XML namespace are written with the `xml:` prefix,
    /// which is never declared and leaves the default namespace as it was:
    /// they, and their children, grow nothing.
    @Test func elementsInTheXMLNamespaceAddNoNamespaceGrowth() {
        let children = String(repeating: "<xml:m><body/></xml:m>", count: 100)  // 2.2 KB
        #expect(acceptedNearItsSize("<message>\(children)</message>")?.elements.count == 100)
    }

    /// `stanza` as parsed under a stanza limit 100 bytes above its size, or
    /// nil if it was refused.
    private func acceptedNearItsSize(_ stanza: String) -> Element? {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: stanza.utf8.count + 100))
        _ = parser.feed("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>")
        guard case .element(let element)? = parser.feed(stanza).first else { return nil }
        return element
    }

    @Test func whitespaceBetweenStanzasIsAKeepaliveNotAnError() {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        #expect(parser.feed(" \n\t \r\n").isEmpty)
        #expect(parser.feed("<presence/>") == [.element(Element("presence", namespace: "jabber:client"))])
    }

    @Test func textBetweenStanzasIsBadFormat() {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        let events = parser.feed("hello<presence/>")
        #expect(errorKind(events) == .badFormat)
    }

    @Test func resetExpectsANewStreamHeader() {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader + "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
        parser.reset()
        let events = parser.feed(clientHeader + "<presence/>")
        #expect(events.count == 2)
        if case .streamOpen = events.first {} else { Issue.record("expected a header after reset") }
    }

    @Test func resetClearsAFailure() {
        let parser = XMLStreamParser()
        #expect(errorKind(parser.feed("<a><b></a>")) == .notWellFormed)
        #expect(parser.feed(clientHeader).isEmpty, "a failed parser stays failed until reset")
        parser.reset()
        #expect(parser.feed(clientHeader).count == 1)
    }

    @Test func unboundPrefixIsBadNamespacePrefix() {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        #expect(errorKind(parser.feed("<foo:message/>")) == .badNamespacePrefix)
    }

    @Test(arguments: ["UTF-8", "utf-8"])
    func utf8DeclarationIsAccepted(encoding: String) {
        let parser = XMLStreamParser()
        let events = parser.feed("<?xml version='1.0' encoding='\(encoding)'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>")
        #expect(events.count == 1)
    }

    @Test func otherEncodingIsUnsupported() {
        let parser = XMLStreamParser()
        let events = parser.feed("<?xml version='1.0' encoding='ISO-8859-1'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>")
        #expect(errorKind(events) == .unsupportedEncoding)
    }

    @Test func stanzaAtTheSizeLimitPassesAndOneByteMoreFails() {
        let open = "<message><body>"
        let close = "</body></message>"
        let limit = 4096
        let fits = open + String(repeating: "x", count: limit - open.utf8.count - close.utf8.count) + close
        #expect(fits.utf8.count == limit)

        let parser = XMLStreamParser(limits: .init(maxStanzaSize: limit))
        _ = parser.feed(clientHeader)
        #expect(parser.feed(fits).count == 1)
        // Whitespace between stanzas does not count towards the next one.
        #expect(parser.feed("   ").isEmpty)
        #expect(parser.feed(fits).count == 1)
        #expect(errorKind(parser.feed(fits.replacingOccurrences("<body>", "<body>y"))) == .policyViolation)
    }

    @Test func limitsMayBeRaisedMidStream() {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: 1024))
        _ = parser.feed(clientHeader)
        parser.limits.maxStanzaSize = 1024 * 1024
        let big = "<iq type='set' id='v'><vCard xmlns='vcard-temp'><PHOTO><BINVAL>"
            + String(repeating: "QUFB", count: 200_000) + "</BINVAL></PHOTO></vCard></iq>"
        #expect(parser.feed(big).count == 1)
    }

    @Test func attributeCountIsLimited() {
        let parser = XMLStreamParser(limits: .init(maxAttributes: 8))
        _ = parser.feed(clientHeader)
        let eight = (0..<8).map { " a\($0)='v'" }.joined()
        #expect(parser.feed("<presence\(eight)/>").count == 1)
        #expect(errorKind(parser.feed("<presence\(eight) a8='v'/>")) == .policyViolation)
    }

    @Test func depthIsLimited() {
        let parser = XMLStreamParser(limits: .init(maxDepth: 4))
        _ = parser.feed(clientHeader)
        #expect(parser.feed("<a><b><c><d/></c></b></a>").count == 1)
        #expect(errorKind(parser.feed("<a><b><c><d><e/></d></c></b></a>")) == .policyViolation)
    }
}

/// The kind of the error event that must end `events`, or nil.
func errorKind(_ events: [XMLStreamEvent]) -> XMLStreamError.Kind? {
    guard case .error(let error) = events.last else { return nil }
    return error.kind
}

extension String {
    /// A literal replacement without Foundation.
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
