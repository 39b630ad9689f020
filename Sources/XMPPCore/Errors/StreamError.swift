/// A stream error: the `<stream:error>` sent just before closing a stream
/// (RFC 6120 §4.9).
///
/// Stream errors are unrecoverable: the sender closes the stream right after
/// (RFC 6120 §4.9.1.1). On the wire:
///
/// ```xml
/// <stream:error>
///   <conflict xmlns="urn:ietf:params:xml:ns:xmpp-streams"/>
///   <text xmlns="urn:ietf:params:xml:ns:xmpp-streams" xml:lang="en">…</text>
/// </stream:error>
/// ```
///
/// COMPAT: XMPPFramework: its reconnect logic stops only on a bare
/// `conflict`, so a replaced session must get exactly that.
public struct StreamError: Error, Sendable, Hashable {
    /// The defined conditions of RFC 6120 §4.9.3; the raw value is the
    /// element name in `urn:ietf:params:xml:ns:xmpp-streams`.
    public enum Condition: String, Sendable, Hashable, CaseIterable {
        /// §4.9.3.1: the XML cannot be processed (use a more specific one if any).
        case badFormat = "bad-format"
        /// §4.9.3.2: an unsupported namespace prefix, or none where one is required.
        case badNamespacePrefix = "bad-namespace-prefix"
        /// §4.9.3.3: a new stream for the same entity replaces this one.
        case conflict = "conflict"
        /// §4.9.3.4: the peer has been silent for too long.
        case connectionTimeout = "connection-timeout"
        /// §4.9.3.5: the `to` domain is no longer served here.
        case hostGone = "host-gone"
        /// §4.9.3.6: the `to` domain is not served here.
        case hostUnknown = "host-unknown"
        /// §4.9.3.7: a stanza lacks a required `to` or `from`.
        case improperAddressing = "improper-addressing"
        /// §4.9.3.8: the server failed internally.
        case internalServerError = "internal-server-error"
        /// §4.9.3.9: a `from` address is not authorized for this stream.
        case invalidFrom = "invalid-from"
        /// §4.9.3.10: the stream or content namespace is wrong.
        case invalidNamespace = "invalid-namespace"
        /// §4.9.3.11: the XML is invalid against a schema (validation is optional).
        case invalidXML = "invalid-xml"
        /// §4.9.3.12: data sent before the stream was authenticated.
        case notAuthorized = "not-authorized"
        /// §4.9.3.13: the XML is not well-formed.
        case notWellFormed = "not-well-formed"
        /// §4.9.3.14: a local policy was violated, for example a size limit.
        case policyViolation = "policy-violation"
        /// §4.9.3.15: a remote server needed for authentication could not be reached.
        case remoteConnectionFailed = "remote-connection-failed"
        /// §4.9.3.16: security settings changed; the peer should open a new stream.
        case reset = "reset"
        /// §4.9.3.17: the server lacks the resources to serve the stream.
        case resourceConstraint = "resource-constraint"
        /// §4.9.3.18: restricted XML (comments, processing instructions,
        /// DTDs, entity references) was sent.
        case restrictedXML = "restricted-xml"
        /// §4.9.3.19: the peer should connect to another host, which it carries.
        case seeOtherHost = "see-other-host"
        /// §4.9.3.20: the server is shutting down.
        case systemShutdown = "system-shutdown"
        /// §4.9.3.21: none of the others; should come with an application condition.
        case undefinedCondition = "undefined-condition"
        /// §4.9.3.22: the stream's character encoding is not UTF-8.
        case unsupportedEncoding = "unsupported-encoding"
        /// §4.9.3.23: a feature the receiver requires was not offered.
        case unsupportedFeature = "unsupported-feature"
        /// §4.9.3.24: a first-level child that is not a known stanza.
        case unsupportedStanzaType = "unsupported-stanza-type"
        /// §4.9.3.25: the `version` in the stream header is not supported.
        case unsupportedVersion = "unsupported-version"
    }

    /// The defined condition.
    public var condition: Condition
    /// A human-readable description, for people rather than programs.
    public var text: String?
    /// The `xml:lang` of `text`.
    public var language: String?
    /// An application-specific condition element, in its own namespace,
    /// refining `condition` (RFC 6120 §4.9.4).
    public var applicationCondition: Element?
    /// For `see-other-host` only: the host (domain, IPv4 or bracketed IPv6,
    /// optionally with `:port`) to connect to instead, carried as the
    /// condition element's character data (RFC 6120 §4.9.3.19). Ignored for
    /// other conditions.
    public var otherHost: String?

    /// Creates a stream error.
    ///
    /// - Parameters:
    ///   - condition: The defined condition.
    ///   - text: A human-readable description.
    ///   - language: The `xml:lang` of `text`.
    ///   - applicationCondition: An application-specific condition element.
    ///   - otherHost: The host to connect to instead, for `see-other-host` only.
    public init(
        _ condition: Condition, text: String? = nil, language: String? = nil,
        applicationCondition: Element? = nil, otherHost: String? = nil
    ) {
        self.condition = condition
        self.text = text
        self.language = language
        self.applicationCondition = applicationCondition
        self.otherHost = otherHost
    }

    /// The `<error/>` element in the streams namespace, which the serializer
    /// writes as `<stream:error>`.
    public var element: Element {
        Element(
            "error", namespace: NS.streams,
            children: content.children(conditionNamespace: NS.streamErrors))
    }

    /// Reads a `<stream:error>` element.
    ///
    /// A missing or unknown condition reads as `undefined-condition`, so a
    /// peer's newer condition still ends the stream with a usable value.
    ///
    /// - Returns: `nil` if `element` is not `error` in the streams namespace.
    public init?(_ element: Element) {
        guard element.name == "error", element.namespace == NS.streams else { return nil }
        let content = ErrorContent(parsing: element, conditionNamespace: NS.streamErrors)
        let condition = Condition(rawValue: content.condition) ?? .undefinedCondition
        self.init(
            condition, text: content.text, language: content.language,
            applicationCondition: content.applicationCondition,
            otherHost: condition == .seeOtherHost ? content.conditionText : nil)
    }

    private var content: ErrorContent {
        ErrorContent(
            condition: condition.rawValue,
            conditionText: condition == .seeOtherHost ? otherHost : nil,
            text: text, language: language, applicationCondition: applicationCondition)
    }
}
