/// A stanza error: the `<error/>` child of a stanza of type `error`
/// (RFC 6120 §8.3).
///
/// The server's IQ handlers throw it (or any `StanzaErrorConvertible`), and
/// one place (`IQRequest.answer`) turns it into an error reply with
/// `errorReply(_:)`. On the wire:
///
/// ```xml
/// <error type="cancel" code="503" by="example.com">
///   <service-unavailable xmlns="urn:ietf:params:xml:ns:xmpp-stanzas"/>
///   <text xmlns="urn:ietf:params:xml:ns:xmpp-stanzas" xml:lang="en">…</text>
///   <app-condition xmlns="urn:example:app"/>
/// </error>
/// ```
///
/// COMPAT: XMPPFramework: the legacy `code` attribute (XEP-0086) is always
/// written: RFC 6120 no longer defines it, but its applications and other
/// old clients still read it. It is ignored when parsing.
public struct StanzaError: Error, Sendable, Hashable {
    /// What the entity that sent the failed stanza should do next
    /// (RFC 6120 §8.3.2); the raw value is the `type` attribute.
    public enum ErrorType: String, Sendable, Hashable, CaseIterable {
        /// Retry after providing credentials.
        case auth
        /// Do not retry: the error cannot be remedied.
        case cancel
        /// Proceed: the condition was only a warning.
        case `continue`
        /// Retry after changing the data sent.
        case modify
        /// Retry after waiting: the error is temporary.
        case wait
    }

    /// The defined conditions of RFC 6120 §8.3.3; the raw value is the
    /// element name in `urn:ietf:params:xml:ns:xmpp-stanzas`.
    public enum Condition: String, Sendable, Hashable, CaseIterable {
        /// §8.3.3.1: the stanza is malformed or cannot be processed.
        case badRequest = "bad-request"
        /// §8.3.3.2: a resource or session with that name already exists.
        case conflict = "conflict"
        /// §8.3.3.3: the recipient does not implement the requested feature.
        case featureNotImplemented = "feature-not-implemented"
        /// §8.3.3.4: the sender is not allowed to do this (authorization).
        case forbidden = "forbidden"
        /// §8.3.3.5: the recipient is no longer at this address; may carry a new address.
        case gone = "gone"
        /// §8.3.3.6: the server failed internally.
        case internalServerError = "internal-server-error"
        /// §8.3.3.7: the addressed JID or item does not exist.
        case itemNotFound = "item-not-found"
        /// §8.3.3.8: a JID in the stanza violates the address format.
        case jidMalformed = "jid-malformed"
        /// §8.3.3.9: the request violates the recipient's criteria.
        case notAcceptable = "not-acceptable"
        /// §8.3.3.10: no entity is allowed to do this.
        case notAllowed = "not-allowed"
        /// §8.3.3.11: the sender must authenticate first.
        case notAuthorized = "not-authorized"
        /// §8.3.3.12: a local service policy was violated.
        case policyViolation = "policy-violation"
        /// §8.3.3.13: the recipient is temporarily unavailable.
        case recipientUnavailable = "recipient-unavailable"
        /// §8.3.3.14: the request should go to another address, which it carries.
        case redirect = "redirect"
        /// §8.3.3.15: the sender must register first.
        case registrationRequired = "registration-required"
        /// §8.3.3.16: the recipient's server does not exist or cannot be resolved.
        case remoteServerNotFound = "remote-server-not-found"
        /// §8.3.3.17: the recipient's server could not be reached in time.
        case remoteServerTimeout = "remote-server-timeout"
        /// §8.3.3.18: the recipient lacks the resources to handle the stanza.
        case resourceConstraint = "resource-constraint"
        /// §8.3.3.19: the service does not exist or does not answer this; also
        /// the answer that hides whether an account exists.
        case serviceUnavailable = "service-unavailable"
        /// §8.3.3.20: the sender must subscribe first.
        case subscriptionRequired = "subscription-required"
        /// §8.3.3.21: none of the others; should come with an application condition.
        case undefinedCondition = "undefined-condition"
        /// §8.3.3.22: the request was understood but not expected now.
        case unexpectedRequest = "unexpected-request"
    }

    /// What the sender should do next.
    public var type: ErrorType
    /// The defined condition.
    public var condition: Condition
    /// A human-readable description, for people rather than programs
    /// (RFC 6120 §8.3.2: it must not be the only way to tell errors apart).
    public var text: String?
    /// The `xml:lang` of `text`.
    public var language: String?
    /// An application-specific condition element, in its own namespace,
    /// refining `condition` (RFC 6120 §8.3.4).
    public var applicationCondition: Element?
    /// The `by` attribute: the JID of the entity that generated the error,
    /// as a string; not validated.
    public var by: String?
    /// For `gone` and `redirect` only: the alternative address, usually an
    /// XMPP URI, carried as the condition element's character data
    /// (RFC 6120 §8.3.3.5 and §8.3.3.14). Ignored for other conditions.
    public var uri: String?

    /// Creates a stanza error.
    ///
    /// - Parameters:
    ///   - condition: The defined condition.
    ///   - type: The error type; `nil` takes `condition.defaultType`.
    ///   - text: A human-readable description.
    ///   - language: The `xml:lang` of `text`.
    ///   - applicationCondition: An application-specific condition element.
    ///   - by: The JID of the entity generating the error.
    ///   - uri: The new address, for `gone` and `redirect` only.
    public init(
        _ condition: Condition, type: ErrorType? = nil, text: String? = nil,
        language: String? = nil, applicationCondition: Element? = nil, by: String? = nil,
        uri: String? = nil
    ) {
        self.condition = condition
        self.type = type ?? condition.defaultType
        self.text = text
        self.language = language
        self.applicationCondition = applicationCondition
        self.by = by
        self.uri = uri
    }

    /// The legacy numeric code written as the `code` attribute (XEP-0086 §3).
    public var legacyCode: Int { condition.legacyCode }

    /// The `<error/>` element, ready to append to a stanza.
    ///
    /// - Parameter namespace: The namespace of the enclosing stanza:
    ///   `jabber:client` or `jabber:server` (the `<error/>` element lives in
    ///   its stanza's namespace, RFC 6120 §8.3.2).
    public func element(namespace: String = NS.client) -> Element {
        var error = Element("error", namespace: namespace)
        error[attribute: "type"] = type.rawValue
        error[attribute: "code"] = String(legacyCode)
        error[attribute: "by"] = by
        error.children = content.children(conditionNamespace: NS.stanzas)
        return error
    }

    /// Reads an `<error/>` element, in any namespace.
    ///
    /// Lenient, because the error is already the answer and there is no one
    /// to report a fault to: a missing or unknown condition reads as
    /// `undefined-condition`, and a missing or unknown `type` as the
    /// condition's default type. The legacy `code` is not read.
    ///
    /// - Returns: `nil` if `element` is not named `error`.
    public init?(_ element: Element) {
        guard element.name == "error" else { return nil }
        let content = ErrorContent(parsing: element, conditionNamespace: NS.stanzas)
        let condition = Condition(rawValue: content.condition) ?? .undefinedCondition
        self.init(
            condition,
            type: element[attribute: "type"].flatMap(ErrorType.init(rawValue:)),
            text: content.text, language: content.language,
            applicationCondition: content.applicationCondition, by: element[attribute: "by"],
            uri: condition.carriesURI ? content.conditionText : nil)
    }

    private var content: ErrorContent {
        ErrorContent(
            condition: condition.rawValue, conditionText: condition.carriesURI ? uri : nil,
            text: text, language: language, applicationCondition: applicationCondition)
    }
}

extension StanzaError.Condition {
    /// The error type this condition takes unless the caller chooses
    /// another: the type RFC 6120 §8.3.3 says it SHOULD have (the first one
    /// where it names two).
    ///
    /// `undefined-condition` may take any type; it defaults to `cancel`, the
    /// safe "do not retry" reading.
    public var defaultType: StanzaError.ErrorType {
        switch self {
        case .forbidden, .notAuthorized, .registrationRequired, .subscriptionRequired:
            .auth
        case .conflict, .featureNotImplemented, .gone, .internalServerError, .itemNotFound,
            .notAllowed, .remoteServerNotFound, .serviceUnavailable, .undefinedCondition:
            .cancel
        case .badRequest, .jidMalformed, .notAcceptable, .policyViolation, .redirect:
            .modify
        case .recipientUnavailable, .remoteServerTimeout, .resourceConstraint, .unexpectedRequest:
            .wait
        }
    }

    /// The legacy numeric error code, from the table in XEP-0086 §3.
    ///
    /// `policy-violation` is newer than XEP-0086 and has no code there; it
    /// uses 406 (Not Acceptable), the code of the closest older condition.
    public var legacyCode: Int {
        switch self {
        case .gone, .redirect: 302
        case .badRequest, .jidMalformed, .unexpectedRequest: 400
        case .notAuthorized: 401
        case .forbidden: 403
        case .itemNotFound, .recipientUnavailable, .remoteServerNotFound: 404
        case .notAllowed: 405
        case .notAcceptable, .policyViolation: 406
        case .registrationRequired, .subscriptionRequired: 407
        case .conflict: 409
        case .internalServerError, .resourceConstraint, .undefinedCondition: 500
        case .featureNotImplemented: 501
        case .serviceUnavailable: 503
        case .remoteServerTimeout: 504
        }
    }

    /// Whether the condition element carries an address as character data
    /// (RFC 6120 §8.3.3.5 and §8.3.3.14).
    var carriesURI: Bool { self == .gone || self == .redirect }
}

/// An error that knows its XMPP form.
///
/// A server IQ handler may throw any error; `IQRequest.answer` answers one
/// that conforms with its `stanzaError`, and anything else with
/// `internal-server-error` plus a log line, so internal details never
/// reach the wire.
public protocol StanzaErrorConvertible: Error {
    /// The stanza error to send back for this error.
    var stanzaError: StanzaError { get }
}

extension StanzaError: StanzaErrorConvertible {
    /// The error itself.
    public var stanzaError: StanzaError { self }
}
