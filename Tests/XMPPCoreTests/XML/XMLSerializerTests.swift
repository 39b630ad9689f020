import Testing
@testable import XMPPCore

private let streams = "http://etherx.jabber.org/streams"
private let clientScope = XMLNamespaceScope(defaultNamespace: "jabber:client", prefixes: [streams: "stream"])

@Suite struct XMLSerializerTests {
    @Test func stanzaInTheStreamNamespaceScopeNeedsNoDeclarations() throws {
        var message = Element("message", namespace: "jabber:client", attributes: ["to": "juliet@example.com"])
        var body = Element("body", namespace: "jabber:client")
        body.append(text: "hi")
        message.append(body)
        message.append(Element("active", namespace: "http://jabber.org/protocol/chatstates"))
        #expect(
            try XMLSerializer.string(message, in: clientScope)
                == "<message to='juliet@example.com'><body>hi</body><active xmlns='http://jabber.org/protocol/chatstates'/></message>"
        )
    }

    @Test func streamNamespaceElementsUseTheStreamPrefix() throws {
        var features = Element("features", namespace: streams)
        features.append(
            Element("starttls", namespace: "urn:ietf:params:xml:ns:xmpp-tls",
                children: [.element(Element("required", namespace: "urn:ietf:params:xml:ns:xmpp-tls"))]))
        #expect(
            try XMLSerializer.string(features, in: clientScope)
                == "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>"
        )
    }

    @Test func outsideAnyScopeTheNamespaceIsDeclared() throws {
        let presence = Element("presence", namespace: "jabber:client")
        #expect(try XMLSerializer.string(presence) == "<presence xmlns='jabber:client'/>")
    }

    @Test func childInNoNamespaceUndeclaresTheDefault() throws {
        let wrapper = Element("x", namespace: "urn:a", children: [.element(Element("y", namespace: ""))])
        #expect(try XMLSerializer.string(wrapper) == "<x xmlns='urn:a'><y xmlns=''/></x>")
    }

    @Test func escapesTextAndAttributes() throws {
        var element = Element("body", namespace: "", attributes: ["a": "it's \"<&>\"\t\n\r"])
        element.append(text: "a < b & c > d \"'\r\n\t")
        #expect(
            try XMLSerializer.string(element)
                == "<body a='it&apos;s &quot;&lt;&amp;&gt;&quot;&#9;&#10;&#13;'>a &lt; b &amp; c &gt; d \"'&#13;\n\t</body>"
        )
    }

    @Test func xmlLangUsesTheReservedPrefix() throws {
        let element = Element(
            "body", namespace: "",
            attributes: [Attribute("lang", namespace: "http://www.w3.org/XML/1998/namespace", "de")])
        #expect(try XMLSerializer.string(element) == "<body xml:lang='de'/>")
    }

    /// The XML namespace may only be written with its reserved prefix: a
    /// default namespace declaration for it is not namespace-well-formed,
    /// so a peer's `<xml:x/>` relayed that way broke the recipient's stream.
    @Test func elementInTheXMLNamespaceUsesTheReservedPrefix() throws {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        guard case .element(let message)? = parser.feed("<message><xml:x xml:lang='en'><y/></xml:x></message>").first
        else {
            Issue.record("the stanza does not parse")
            return
        }
        let bytes = try XMLSerializer.bytes(message, in: clientScope)
        #expect(String(decoding: bytes, as: UTF8.self) == "<message><xml:x xml:lang='en'><y/></xml:x></message>")
        #expect(parser.feed(bytes) == [.element(message)])
    }

    @Test func foreignAttributeNamespaceGetsAPrefixDeclaredOnce() throws {
        let element = Element(
            "item", namespace: "",
            attributes: [Attribute("a", namespace: "urn:x", "1"), Attribute("b", namespace: "urn:x", "2")])
        #expect(try XMLSerializer.string(element) == "<item xmlns:ns0='urn:x' ns0:a='1' ns0:b='2'/>")
    }

    @Test(arguments: [0x00, 0x01, 0x08, 0x0B, 0x0C, 0x1F, 0xFFFE, 0xFFFF] as [UInt32])
    func charactersOutsideXMLAreRefused(_ scalar: UInt32) {
        let bad = String(Character(Unicode.Scalar(scalar)!))
        var text = Element("body", namespace: "")
        text.append(text: "ok" + bad)
        #expect(throws: XMLSerializationError.invalidCharacter(scalar)) { try XMLSerializer.bytes(text) }
        let attribute = Element("body", namespace: "", attributes: ["a": bad])
        #expect(throws: XMLSerializationError.invalidCharacter(scalar)) { try XMLSerializer.bytes(attribute) }
    }

    @Test func charactersNextToTheForbiddenOnesAreKept() throws {
        var element = Element("body", namespace: "")
        element.append(text: "\u{FFFD}\u{FEFF}\u{E000}\u{10FFFF}\u{D7FF}")
        #expect(try XMLSerializer.string(element) == "<body>\u{FFFD}\u{FEFF}\u{E000}\u{10FFFF}\u{D7FF}</body>")
    }

    @Test(arguments: ["", "a b", "a<b", "1abc", "-a", "p:local", "a/b", "a=b"])
    func badNamesAreRefused(_ name: String) {
        #expect(throws: XMLSerializationError.invalidName(name)) {
            try XMLSerializer.bytes(Element(name, namespace: ""))
        }
        #expect(throws: XMLSerializationError.invalidName(name)) {
            try XMLSerializer.bytes(Element("ok", namespace: "", attributes: [Attribute(name, "v")]))
        }
    }

    @Test func streamOpeningAndClosing() throws {
        let header = StreamHeader(
            name: "stream", namespace: streams, defaultNamespace: "jabber:client",
            prefixes: ["stream": streams],
            attributes: [
                Attribute("from", "example.com"), Attribute("id", "abc"), Attribute("version", "1.0"),
                Attribute("lang", namespace: "http://www.w3.org/XML/1998/namespace", "en"),
            ])
        let opening = String(decoding: try XMLSerializer.streamOpening(header), as: UTF8.self)
        #expect(
            opening
                == "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='example.com' id='abc' version='1.0' xml:lang='en'>"
        )
        #expect(String(decoding: XMLSerializer.streamClosing(header), as: UTF8.self) == "</stream:stream>")

        // What we write, our parser reads back as the same header.
        let parser = XMLStreamParser()
        #expect(parser.feed(try XMLSerializer.streamOpening(header)) == [.streamOpen(header)])
    }
}

/// Parse → serialize → parse over generated trees: whatever we write reads
/// back as the same tree, in any namespace scope.
@Suite struct XMLRoundTripTests {
    @Test(arguments: 0..<300)
    func generatedTreeRoundTrips(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed))
        let tree = normalized(randomElement(&random, depth: 0))
        let bytes = try XMLSerializer.bytes(tree, in: clientScope)

        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        // Feed in random pieces to exercise the incremental path as well.
        var events: [XMLStreamEvent] = []
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, Int(random.next() % 64) + 1)
            events += parser.feed(Array(bytes[offset..<offset + count]))
            offset += count
        }
        #expect(events == [.element(tree)], "\(String(decoding: bytes, as: UTF8.self))")

        // Serializing the parsed tree again gives the same bytes.
        if case .element(let parsed)? = events.first {
            #expect(try XMLSerializer.bytes(parsed, in: clientScope) == bytes)
        }
    }
}

// MARK: - Generators

/// A small deterministic generator, so failures reproduce from the seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let namespacePool = ["jabber:client", "", "urn:xmpp:a", "urn:xmpp:b", streams, "vcard-temp"]
private let namePool = ["message", "body", "x", "item", "query", "a-b", "c.d", "_e", "ünï", "日本"]
private let textPool = [
    "plain", " spaced  out ", "&", "<", ">", "]]>", "'", "\"", "\r\n", "\t", "tab\there", "König", "😀",
    "\u{FEFF}", "\u{10FFFF}", "a&b<c>d",
]

private func randomElement(_ random: inout SplitMix64, depth: Int) -> Element {
    var element = Element(
        namePool.randomElement(using: &random)!, namespace: namespacePool.randomElement(using: &random)!)
    var usedNames = Set<String>()
    for _ in 0..<Int(random.next() % 4) {
        let name = namePool.randomElement(using: &random)!
        let namespace = ["", "", "urn:xmpp:attr", "http://www.w3.org/XML/1998/namespace"].randomElement(using: &random)!
        guard usedNames.insert(namespace + " " + name).inserted else { continue }
        element.attributes.append(Attribute(name, namespace: namespace, randomText(&random)))
    }
    let childCount = depth < 5 ? Int(random.next() % 5) : 0
    for _ in 0..<childCount {
        if random.next() % 2 == 0 {
            element.append(text: randomText(&random))
        } else {
            element.append(randomElement(&random, depth: depth + 1))
        }
    }
    return element
}

private func randomText(_ random: inout SplitMix64) -> String {
    (0..<Int(random.next() % 4)).map { _ in textPool.randomElement(using: &random)! }.joined()
}

/// The tree a parser reports for `element`: adjacent text merged, empty
/// text dropped.
private func normalized(_ element: Element) -> Element {
    var result = element
    result.children = []
    for child in element.children {
        switch child {
        case .element(let child):
            result.append(normalized(child))
        case .text(let text) where text.isEmpty:
            continue
        case .text(let text):
            if case .text(let previous)? = result.children.last {
                result.children[result.children.count - 1] = .text(previous + text)
            } else {
                result.append(text: text)
            }
        }
    }
    return result
}
