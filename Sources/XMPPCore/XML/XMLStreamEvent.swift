/// What the stream parser reports, in the order it happened in the bytes.
public enum XMLStreamEvent: Sendable, Hashable {
    /// The stream's opening tag arrived.
    case streamOpen(StreamHeader)
    /// A complete top-level element (a stanza or a nonza such as `<auth/>`).
    case element(Element)
    /// The stream's closing tag arrived.
    case streamClose
    /// Parsing stopped for good; always the last event. Reset the parser to
    /// parse again.
    case error(XMLStreamError)
}
