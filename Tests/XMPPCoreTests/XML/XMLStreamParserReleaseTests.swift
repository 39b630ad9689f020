import Testing
@testable import XMPPCore

/// `XMLStreamParser.releaseWhileIdle()`: Expat is freed between stanzas and
/// recreated by the next feed, and what the stream parses to stays the same.
@Suite struct XMLStreamParserReleaseTests {
    private let first = "<message type='chat'><body>Grüße 😀</body></message>"
    private let second = "<presence><show>away</show></presence>"

    /// The events of feeding `header` and then `rest` whole, without
    /// releasing.
    private func eventsWithoutRelease(_ header: String, _ rest: String) -> [XMLStreamEvent] {
        let parser = XMLStreamParser()
        return parser.feed(header) + parser.feed(rest)
    }

    /// Cut anywhere from the start of the first stanza to the end of the
    /// second, with a release tried at the cut: the stream parses the same,
    /// the release happens where a stanza has just ended and never inside one.
    @Test func anyCutAroundABoundaryParsesTheSame() {
        let rest = Array((first + " \n" + second + "</stream:stream>").utf8)
        let expected = eventsWithoutRelease(clientHeader, String(decoding: rest, as: UTF8.self))
        #expect(expected.count == 4)
        let firstEnd = first.utf8.count
        let secondStart = firstEnd + 2
        let secondEnd = secondStart + second.utf8.count
        for cut in 0...secondEnd {
            let parser = XMLStreamParser()
            var events = parser.feed(clientHeader) + parser.feed(Array(rest[..<cut]))
            let released = parser.releaseWhileIdle()
            events += parser.feed(Array(rest[cut...]))
            #expect(events == expected, "cut at \(cut)")
            if cut == firstEnd || cut == secondEnd {
                #expect(released, "not released at the end of a stanza (\(cut))")
            } else if (1..<firstEnd).contains(cut) || (secondStart + 1..<secondEnd).contains(cut) {
                #expect(!released, "released inside a stanza (\(cut))")
            }
        }
    }

    /// A release tried after every byte, as a slow peer would make it.
    @Test func releasingAfterEveryByteParsesTheSame() {
        let rest = first + second + " " + first + "</stream:stream>"
        let expected = eventsWithoutRelease(clientHeader, rest)
        let parser = XMLStreamParser()
        var events = parser.feed(clientHeader)
        var releases = 0
        for byte in rest.utf8 {
            events += parser.feed([byte])
            if parser.releaseWhileIdle() { releases += 1 }
        }
        #expect(events == expected)
        #expect(releases >= 3)
    }

    /// Prefixes the peer declared on its header stay bound after a release,
    /// and the header's own prefix still closes the stream.
    @Test func extraHeaderPrefixesSurviveARelease() {
        let header = """
            <s:stream xmlns='jabber:server' xmlns:s='http://etherx.jabber.org/streams' \
            xmlns:db='jabber:server:dialback' xmlns:x='urn:example:x' to='example.com' version='1.0'>
            """
        let pieces = [
            "<db:result from='a.example' to='example.com'>key</db:result>",
            "<message x:mark='1'><x:note>hi</x:note></message>", "</s:stream>",
        ]
        let expected = eventsWithoutRelease(header, pieces.joined())
        #expect(expected.count == 4)
        let parser = XMLStreamParser()
        var events = parser.feed(header)
        for piece in pieces {
            #expect(parser.releaseWhileIdle())
            events += parser.feed(piece)
        }
        #expect(events == expected)
        guard case .element(let result) = events[1] else { return }
        #expect(result.namespace == "jabber:server:dialback")
        guard case .element(let message) = events[2] else { return }
        #expect(message.namespace == "jabber:server")
        #expect(message[attribute: "mark", namespace: "urn:example:x"] == "1")
        #expect(message.child("note", namespace: "urn:example:x") != nil)
    }

    /// A header that binds its own namespace twice could be closed with
    /// either name; a prologue of ours could only match one, so the parser
    /// keeps Expat.
    @Test func headerWithTwoNamesForItsNamespaceIsNotReleased() {
        let parser = XMLStreamParser()
        _ = parser.feed(
            "<stream:stream xmlns='http://etherx.jabber.org/streams' xmlns:stream='http://etherx.jabber.org/streams'>")
        #expect(!parser.releaseWhileIdle())
        #expect(parser.feed("<features/></stream:stream>").count == 2)
    }

    @Test func releaseIsRefusedMidStanzaAndMidToken() {
        let parser = XMLStreamParser()
        #expect(!parser.releaseWhileIdle(), "released before the header")
        _ = parser.feed(clientHeader)
        #expect(parser.releaseWhileIdle())
        _ = parser.feed("<message><body>hi")
        #expect(!parser.releaseWhileIdle(), "released inside an element")
        _ = parser.feed("</body></message><pres")
        #expect(!parser.releaseWhileIdle(), "released inside a start tag")
        #expect(parser.feed("ence/>").count == 1)
        #expect(parser.releaseWhileIdle())
        _ = parser.feed([0xF0, 0x9F])  // half of an emoji, outside any stanza
        #expect(!parser.releaseWhileIdle(), "released inside a character")
    }

    @Test func releaseIsRefusedAfterTheStreamClosedOrFailed() {
        let closed = XMLStreamParser()
        _ = closed.feed(clientHeader + "</stream:stream>")
        #expect(!closed.releaseWhileIdle())
        let failed = XMLStreamParser()
        _ = failed.feed(clientHeader + "<a></b>")
        #expect(!failed.releaseWhileIdle())
    }

    /// The stanza limit counts from the end of the last stanza whether or
    /// not the parser was released in between, and errors are still found.
    @Test func limitsAndErrorsHoldAfterARelease() {
        let open = "<message><body>"
        let close = "</body></message>"
        let limit = 1024
        let fits = open + String(repeating: "x", count: limit - open.utf8.count - close.utf8.count) + close
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: limit))
        _ = parser.feed(clientHeader)
        #expect(parser.releaseWhileIdle())
        #expect(parser.feed(fits).count == 1)
        #expect(parser.releaseWhileIdle())
        #expect(errorKind(parser.feed(fits.replacingOccurrences("<body>", "<body>y"))) == .policyViolation)

        let unbound = XMLStreamParser()
        _ = unbound.feed(clientHeader)
        #expect(unbound.releaseWhileIdle())
        #expect(errorKind(unbound.feed("<foo:message/>")) == .badNamespacePrefix)
    }

    /// A reset after a release expects a new header, as after any reset.
    @Test func resetAfterAReleaseExpectsANewHeader() {
        let parser = XMLStreamParser()
        _ = parser.feed(clientHeader)
        #expect(parser.releaseWhileIdle())
        parser.reset()
        let events = parser.feed(clientHeader + "<presence/>")
        #expect(events.count == 2)
        if case .streamOpen = events.first {} else { Issue.record("expected a header after reset") }
    }
}
