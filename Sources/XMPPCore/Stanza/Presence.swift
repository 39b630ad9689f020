/// A `<presence/>` stanza: availability and subscription management
/// (RFC 6121 §3 and §4).
public struct Presence: StanzaView {
    /// The presence types of RFC 6121 §4.7.1 plus `available`, which is the
    /// absence of a `type` attribute. The raw value is the attribute value;
    /// `available` has none, hence `""`.
    public enum PresenceType: String, Sendable, Hashable, CaseIterable {
        /// Online (no `type` attribute).
        case available = ""
        /// Offline.
        case unavailable
        /// A request to subscribe to the recipient's presence.
        case subscribe
        /// Approval of a subscription request.
        case subscribed
        /// A request to end a subscription.
        case unsubscribe
        /// Denial or cancellation of a subscription.
        case unsubscribed
        /// A server asking for an entity's current presence.
        case probe
        /// An error reply to a presence the recipient sent.
        case error
    }

    /// The availability sub-states of RFC 6121 §4.7.2.1; the raw value is the
    /// `<show/>` text.
    public enum Show: String, Sendable, Hashable, CaseIterable {
        /// Temporarily away.
        case away
        /// Actively interested in chatting.
        case chat
        /// Do not disturb.
        case dnd
        /// Away for an extended period.
        case xa
    }

    /// The stanza itself.
    public var element: Element

    /// Wraps `element` if it is a `<presence/>` in `jabber:client` or
    /// `jabber:server`.
    public init?(_ element: Element) {
        guard element.name == "presence", isStanzaNamespace(element.namespace) else { return nil }
        self.element = element
    }

    /// Creates a presence.
    ///
    /// - Parameters:
    ///   - type: The type; `available` writes no `type` attribute.
    ///   - to: The recipient; `nil` for a broadcast.
    ///   - id: The stanza id.
    ///   - show: The availability sub-state.
    ///   - status: The human-readable status.
    ///   - priority: The resource priority; `nil` leaves it out, which means 0.
    ///   - namespace: `jabber:client` or `jabber:server`.
    public init(
        type: PresenceType = .available, to: JID? = nil, id: String? = nil, show: Show? = nil,
        status: String? = nil, priority: Int8? = nil, namespace: String = NS.client
    ) {
        element = .stanza("presence", namespace: namespace, type: nil, to: to, id: id)
        self.type = type
        self.show = show
        self.status = status
        replaceChildText("priority", with: priority.map { String($0) })
    }

    /// The presence type: `available` when there is no `type` attribute,
    /// `nil` when it holds a value RFC 6121 §4.7.1 does not define (an empty
    /// one included). Setting `available` or `nil` removes the attribute.
    public var type: PresenceType? {
        get {
            guard let raw = element[attribute: "type"] else { return .available }
            return raw.isEmpty ? nil : PresenceType(rawValue: raw)
        }
        set {
            let raw = newValue?.rawValue ?? ""
            element[attribute: "type"] = raw.isEmpty ? nil : raw
        }
    }

    /// The availability sub-state, or `nil` for plain available or for a
    /// value RFC 6121 §4.7.2.1 does not define.
    public var show: Show? {
        get { element.childText("show").flatMap(Show.init(rawValue:)) }
        set { replaceChildText("show", with: newValue?.rawValue) }
    }

    /// The status text in the stanza's default language (RFC 6121 §4.7.2.2).
    /// Setting replaces every `<status/>`.
    public var status: String? {
        get { localizedText("status") }
        set { replaceChildText("status", with: newValue) }
    }

    /// The resource priority, -128 to 127, 0 when absent (RFC 6121 §4.7.2.3).
    ///
    /// - Throws: `bad-request` if `<priority/>` is not an integer in that
    ///   range.
    public var priority: Int8 {
        get throws(StanzaError) {
            guard let text = element.childText("priority") else { return 0 }
            guard let priority = Int8(text.trimmingXMLWhitespace()) else {
                throw StanzaError(.badRequest, text: "Priority must be an integer from -128 to 127")
            }
            return priority
        }
    }

    /// Checks what a server must reject before routing the presence.
    ///
    /// - Throws: `bad-request` for an undefined `type` (RFC 6120 §8.3.3.1)
    ///   or an invalid `<priority/>` (RFC 6121 §4.7.2.3).
    public func validate() throws(StanzaError) {
        guard type != nil else {
            throw StanzaError(.badRequest, text: "Unknown presence type")
        }
        _ = try priority
    }
}
