/// The opening tag of an XML stream (RFC 6120 §4.7): its qualified name,
/// attributes and the namespaces it declares.
///
/// The parser reports it as it arrived; checking it (`to`, `version`, the
/// namespaces) is the session's job, because the right stream error depends
/// on which side of the stream we are.
public struct StreamHeader: Sendable, Hashable {
    /// The root element's local name; `stream` for XMPP.
    public var name: String
    /// The root element's namespace; `http://etherx.jabber.org/streams` for XMPP.
    public var namespace: String
    /// The default namespace the header declares (`jabber:client` for a
    /// client stream), or `nil` when it declares none.
    public var defaultNamespace: String?
    /// The prefixed namespace declarations, prefix → URI (usually just
    /// `stream` → the streams namespace).
    public var prefixes: [String: String]
    /// The attributes (`to`, `from`, `id`, `version`, `xml:lang`).
    public var attributes: [Attribute]

    /// Creates a header.
    public init(
        name: String, namespace: String, defaultNamespace: String?,
        prefixes: [String: String], attributes: [Attribute]
    ) {
        self.name = name
        self.namespace = namespace
        self.defaultNamespace = defaultNamespace
        self.prefixes = prefixes
        self.attributes = attributes
    }

    /// The value of the unqualified attribute `name`, or of the one in
    /// `namespace` when given.
    public subscript(attribute name: String, namespace namespace: String = "") -> String? {
        attributes.first { $0.name == name && $0.namespace == namespace }?.value
    }
}
