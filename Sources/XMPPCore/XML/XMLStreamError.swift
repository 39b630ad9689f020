/// Why the XML stream parser stopped. Every case maps to one stream error
/// condition of RFC 6120 §4.9.3 (see `XMLStreamError+StreamError.swift`).
public struct XMLStreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Hashable {
        /// Malformed XML or invalid UTF-8 (RFC 6120 §11.3, `not-well-formed`).
        case notWellFormed
        /// XML that RFC 6120 §11.1 forbids in a stream: comments, processing
        /// instructions, DTDs and entity declarations (`restricted-xml`).
        case restrictedXML
        /// A configured limit was passed: stanza size, nesting depth or
        /// attribute count (`policy-violation`).
        case policyViolation
        /// A qualified name whose prefix is not bound (RFC 6120 §11.2,
        /// `bad-namespace-prefix`).
        case badNamespacePrefix
        /// An encoding other than UTF-8 was declared (RFC 6120 §11.6,
        /// `unsupported-encoding`).
        case unsupportedEncoding
        /// Well-formed XML that is not an XMPP stream, such as text
        /// between stanzas (`bad-format`).
        case badFormat
    }

    /// The class of failure.
    public let kind: Kind
    /// What exactly was wrong, for the log and the stream error's `<text/>`.
    public let detail: String

    /// Creates an error.
    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { "\(kind): \(detail)" }
}
