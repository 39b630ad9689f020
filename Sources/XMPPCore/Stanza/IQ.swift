/// An `<iq/>` stanza: a request and its single response (RFC 6120 §8.2.3).
public struct IQ: StanzaView {
    /// The IQ types of RFC 6120 §8.2.3; the raw value is the `type` attribute.
    public enum IQType: String, Sendable, Hashable, CaseIterable {
        /// A request for information.
        case get
        /// A request to provide data or change state.
        case set
        /// A successful response.
        case result
        /// A failed response.
        case error
    }

    /// The stanza itself.
    public var element: Element

    /// Wraps `element` if it is an `<iq/>` in `jabber:client` or
    /// `jabber:server`. Nothing else is checked: see `validate()`.
    public init?(_ element: Element) {
        guard element.name == "iq", isStanzaNamespace(element.namespace) else { return nil }
        self.element = element
    }

    /// Creates an IQ.
    ///
    /// - Parameters:
    ///   - type: The type.
    ///   - to: The recipient; `nil` addresses the sender's own account.
    ///   - id: The id, which the response copies; required on every IQ.
    ///   - payload: The child element: the request, or a result's data.
    ///   - namespace: `jabber:client` or `jabber:server`.
    public init(
        type: IQType, to: JID? = nil, id: String, payload: Element? = nil,
        namespace: String = NS.client
    ) {
        element = .stanza("iq", namespace: namespace, type: type.rawValue, to: to, id: id)
        self.payload = payload
    }

    /// The IQ type, or `nil` when `type` is missing or not one of the four.
    public var type: IQType? {
        get { element[attribute: "type"].flatMap(IQType.init(rawValue:)) }
        set { element[attribute: "type"] = newValue?.rawValue }
    }

    /// The payload: the first child element other than the stanza's
    /// `<error/>`, such as `<query xmlns="jabber:iq:roster"/>`.
    ///
    /// Setting replaces every child element except `<error/>`, and puts the
    /// new payload first.
    public var payload: Element? {
        get { element.elements.first { !isErrorChild($0) } }
        set {
            let kept = element.children.filter {
                if case .element(let child) = $0 { isErrorChild(child) } else { false }
            }
            element.children = (newValue.map { [Node.element($0)] } ?? []) + kept
        }
    }

    /// Checks the rules of RFC 6120 §8.2.3 that make an IQ answerable.
    ///
    /// - Throws: `bad-request` if the `id` is missing or empty, the `type`
    ///   is missing or unknown, a `get` or `set` does not have exactly one
    ///   child element, a `result` has more than one, or an `error` has no
    ///   `<error/>` child. The caller still must not answer an IQ of type
    ///   `error` (RFC 6120 §8.3.1): `errorReply(_:)` returns `nil` for one.
    public func validate() throws(StanzaError) {
        guard let id, !id.isEmpty else { throw invalid("An IQ needs an id") }
        guard let type else { throw invalid("IQ type must be get, set, result or error") }
        let childCount = element.elements.count
        switch type {
        case .get, .set:
            guard childCount == 1 else { throw invalid("A \(type) IQ needs exactly one child element") }
        case .result:
            guard childCount <= 1 else { throw invalid("A result IQ has at most one child element") }
        case .error:
            guard element.elements.contains(where: isErrorChild) else {
                throw invalid("An error IQ needs an <error/> child")
            }
        }
    }

    private func isErrorChild(_ child: Element) -> Bool {
        child.name == "error" && child.namespace == element.namespace
    }

    private func invalid(_ text: String) -> StanzaError {
        StanzaError(.badRequest, text: text)
    }
}
