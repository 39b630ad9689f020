import XMPPCore

/// Stanzas and payloads (offline messages, pending subscription requests,
/// vCards) kept in storage as XML text, written in the client stream's
/// scope (no `xmlns='jabber:client'`) and read back the same way.
enum StoredStanza {
    static func serialize(_ element: Element) -> String? {
        try? XMLSerializer.string(element, in: ClientSession.clientScope)
    }

    /// Parses what `serialize` wrote. The limits only guard against damage:
    /// what is stored passed the stanza limits when it arrived, and
    /// `max_stanza_size` goes up to 64 MiB.
    static func parse(_ xml: String) -> Element? {
        let parser = XMLStreamParser(limits: limits)
        _ = parser.feed("<stream xmlns='jabber:client'>")
        guard case .element(let element)? = parser.feed(xml).first else { return nil }
        return element
    }

    private static let limits = XMLStreamParser.Limits(maxStanzaSize: 65 << 20)
}
