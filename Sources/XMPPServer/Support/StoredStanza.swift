import XMPPCore

/// Stanzas and payloads (offline messages, pending subscription requests,
/// vCards) kept in storage as XML text, written in the client stream's
/// scope (no `xmlns='jabber:client'`) and read back the same way.
package enum StoredStanza {
    package static func serialize(_ element: Element) -> String? {
        try? XMLSerializer.string(element, in: ClientSession.clientScope)
    }

    /// Parses what `serialize` wrote.
    ///
    /// Whatever the wire accepted must read back, yet what `serialize`
    /// writes can exceed every limit the stream applied: the router stamps
    /// `from` (one attribute more), an attribute value may grow six times
    /// (`'` becomes `&apos;`), the namespace of a prefixed attribute is
    /// declared again on each element that uses it, and the stanza was up
    /// to `max_stanza_size` (64 MiB at most) before all that. So the text
    /// bounds itself: stanza size, token size and attribute count are
    /// limited only by its length. The stream's limits guard memory a peer
    /// makes the server hold and Expat's rescans of a token trickled in
    /// byte by byte; here the text is in memory already and fed at once, so
    /// a token is rescanned once per 64 KiB slice at most. The stanza size
    /// is bounded by twice the length, since the parser also counts the
    /// namespace declarations that writing the stanza out again costs, and
    /// the stored text holds those already. Depth keeps the stream's bound,
    /// since serializing never nests deeper.
    package static func parse(_ xml: String) -> Element? {
        let parser = makeParser(bound: bound(of: xml))
        guard case .element(let element)? = parser.feed(xml).first else { return nil }
        return element
    }

    /// What the limits of a parser for `xml` derive from (see `parse`).
    fileprivate static func bound(of xml: String) -> Int {
        streamOpening.utf8.count + xml.utf8.count
    }

    /// A parser for texts up to `bound` (see `parse`), inside the stream
    /// header already.
    fileprivate static func makeParser(bound: Int) -> XMLStreamParser {
        let parser = XMLStreamParser(
            limits: .init(maxStanzaSize: 2 * bound, maxAttributes: bound, maxTokenSize: bound))
        _ = parser.feed(streamOpening)
        return parser
    }

    /// The stream header stored text is parsed under: it declares what the
    /// scope `serialize` writes in declares, the `stream:` prefix included,
    /// which a child in the streams namespace is written with.
    private static let streamOpening: String = {
        let scope = ClientSession.clientScope
        let header = StreamHeader(
            name: "stream", namespace: NS.streams, defaultNamespace: scope.defaultNamespace,
            prefixes: Dictionary(uniqueKeysWithValues: scope.prefixes.map { ($0.value, $0.key) }), attributes: [])
        // The header has no attributes, and its names and namespaces are
        // our own constants: nothing in it can fail to serialize.
        return String(decoding: try! XMLSerializer.streamOpening(header), as: UTF8.self)
    }()
}

/// Parses stored stanzas one after another with one parser, where
/// `StoredStanza.parse` makes one per stanza: for a backlog read at once
/// (offline messages), where making the parser costs more than parsing a
/// small stanza. It reads what `StoredStanza.parse` reads.
///
/// After a text that the shared parser does not read as exactly one stanza
/// (a damaged row may leave it failed, or inside an element or a
/// comment), that text is parsed alone, and the next gets a fresh parser.
/// A well-formed row cannot end inside an element, since markup characters
/// in its text are escaped, so a parser left that way by a damaged row only
/// makes the next one take the slow path.
package final class StoredStanzaReader {
    private var parser: XMLStreamParser?
    /// The bound `parser`'s limits derive from.
    private var bound = 0
    /// The least bound a parser gets, so that a backlog of growing texts
    /// does not make a parser for each.
    private static let minimumBound = 64 * 1024

    package init() {}

    /// The stanza `xml` holds, as `StoredStanza.parse(xml)` reads it.
    package func parse(_ xml: String) -> Element? {
        let needed = StoredStanza.bound(of: xml)
        if needed > bound {
            bound = max(needed, Self.minimumBound)
            parser = StoredStanza.makeParser(bound: bound)
        }
        if let events = parser?.feed(xml), events.count == 1, case .element(let element) = events[0] {
            return element
        }
        parser = nil
        bound = 0
        return StoredStanza.parse(xml)
    }
}

/// A stored row that does not read back (a damaged database): thrown by a
/// handler, it is logged and answered with `internal-server-error`.
struct DamagedRecord: Error, CustomStringConvertible {
    /// What was damaged, for the log.
    let description: String
}
