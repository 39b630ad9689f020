/// A `<message/>` stanza: push content to a recipient (RFC 6121 §5).
public struct Message: StanzaView {
    /// The message types of RFC 6121 §5.2.2; the raw value is the `type`
    /// attribute.
    public enum MessageType: String, Sendable, Hashable, CaseIterable {
        /// One-to-one conversation.
        case chat
        /// An error reply to a message the recipient sent.
        case error
        /// Multi-user chat.
        case groupchat
        /// An alert or notification that expects no reply.
        case headline
        /// A standalone message that may expect a reply; the default.
        case normal
    }

    /// A conversation thread (RFC 6121 §5.2.5).
    public struct Thread: Sendable, Hashable {
        /// The thread identifier, the `<thread/>` element's text.
        public var id: String
        /// The thread this one was spawned from: the `parent` attribute.
        public var parent: String?

        /// Creates a thread reference.
        public init(_ id: String, parent: String? = nil) {
            self.id = id
            self.parent = parent
        }
    }

    /// The stanza itself.
    public var element: Element

    /// Wraps `element` if it is a `<message/>` in `jabber:client` or
    /// `jabber:server`.
    public init?(_ element: Element) {
        guard element.name == "message", isStanzaNamespace(element.namespace) else { return nil }
        self.element = element
    }

    /// Creates a message.
    ///
    /// - Parameters:
    ///   - type: The type; `nil` leaves the attribute out, which means `normal`.
    ///   - to: The recipient.
    ///   - id: The stanza id.
    ///   - body: The body text.
    ///   - namespace: `jabber:client` or `jabber:server`.
    public init(
        type: MessageType? = nil, to: JID? = nil, id: String? = nil, body: String? = nil,
        namespace: String = NS.client
    ) {
        element = .stanza("message", namespace: namespace, type: type?.rawValue, to: to, id: id)
        self.body = body
    }

    /// The message type. A missing or unrecognized `type` reads as `normal`,
    /// as RFC 6121 §5.2.2 requires of recipients.
    public var type: MessageType {
        get { element[attribute: "type"].flatMap(MessageType.init(rawValue:)) ?? .normal }
        set { element[attribute: "type"] = newValue.rawValue }
    }

    /// The body in the stanza's default language (RFC 6121 §5.2.3).
    /// Setting replaces every `<body/>`, whatever its language.
    public var body: String? {
        get { localizedText("body") }
        set { replaceChildText("body", with: newValue) }
    }

    /// Every body, keyed by language (the body's `xml:lang`, else the
    /// stanza's, else `""`).
    public var bodies: [String: String] { localizedTexts("body") }

    /// The subject in the stanza's default language (RFC 6121 §5.2.4).
    /// Setting replaces every `<subject/>`.
    public var subject: String? {
        get { localizedText("subject") }
        set { replaceChildText("subject", with: newValue) }
    }

    /// The conversation thread (RFC 6121 §5.2.5), or `nil` when there is no
    /// `<thread/>` child.
    public var thread: Thread? {
        get {
            element.child("thread").map { Thread($0.text, parent: $0[attribute: "parent"]) }
        }
        set {
            element.removeChildren("thread", namespace: element.namespace)
            guard let newValue else { return }
            var thread = Element("thread", namespace: element.namespace, children: [.text(newValue.id)])
            thread[attribute: "parent"] = newValue.parent
            element.append(thread)
        }
    }
}
