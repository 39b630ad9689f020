/// A typed view over the `Element` of one stanza (RFC 6120 §8).
///
/// Views do not copy data out: every accessor reads or writes `element`, so
/// a view can be changed and its `element` sent as is, and nothing a view
/// does not understand is lost. `Stanza` is the view for any stanza;
/// `Message`, `Presence` and `IQ` add what is particular to each.
public protocol StanzaView: Sendable, Hashable {
    /// The stanza itself.
    var element: Element { get set }

    /// Wraps `element`, or returns `nil` if it is not a stanza of this view's
    /// kind in `jabber:client` or `jabber:server`.
    init?(_ element: Element)
}

/// Any stanza: `<message/>`, `<presence/>` or `<iq/>` (RFC 6120 §8.1).
public struct Stanza: StanzaView {
    /// The three kinds of stanza; the raw value is the element name.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case message, presence, iq
    }

    /// The stanza itself.
    public var element: Element

    /// Wraps `element` if it is a message, presence or iq in `jabber:client`
    /// or `jabber:server`.
    public init?(_ element: Element) {
        guard Kind(rawValue: element.name) != nil, isStanzaNamespace(element.namespace) else {
            return nil
        }
        self.element = element
    }

    /// Which kind of stanza this is.
    public var kind: Kind {
        guard let kind = Kind(rawValue: element.name) else {
            preconditionFailure("Stanza element renamed to \(element.name)")
        }
        return kind
    }

    /// The raw `type` attribute; the per-kind views interpret it.
    public var type: String? {
        get { element[attribute: "type"] }
        set { element[attribute: "type"] = newValue }
    }
}

/// Whether `namespace` is a stanza namespace: `jabber:client` on
/// client-to-server streams, `jabber:server` between servers (RFC 6120 §4.8.3).
func isStanzaNamespace(_ namespace: String) -> Bool {
    namespace == NS.client || namespace == NS.server
}

// MARK: - The common attributes (RFC 6120 §8.1)

extension StanzaView {
    /// The intended recipient, from the `to` attribute (RFC 6120 §8.1.1).
    ///
    /// `nil` when there is no `to` and also when it is not a valid JID; a
    /// server that must answer the latter with `jid-malformed` uses
    /// `recipient()`. Setting writes the JID's normalized form.
    public var to: JID? {
        get { try? recipient() }
        set { element[attribute: "to"] = newValue?.description }
    }

    /// The sender, from the `from` attribute (RFC 6120 §8.1.2). Like `to`,
    /// `nil` for an invalid JID; see `sender()`.
    public var from: JID? {
        get { try? sender() }
        set { element[attribute: "from"] = newValue?.description }
    }

    /// The recipient from the `to` attribute, or `nil` if there is none.
    ///
    /// - Throws: `JIDError` if the attribute is not a valid JID, which a
    ///   server answers with `jid-malformed` (RFC 6120 §8.3.3.8).
    public func recipient() throws(JIDError) -> JID? {
        guard let to = element[attribute: "to"] else { return nil }
        return try JID(to)
    }

    /// The sender from the `from` attribute, or `nil` if there is none.
    ///
    /// - Throws: `JIDError` if the attribute is not a valid JID.
    public func sender() throws(JIDError) -> JID? {
        guard let from = element[attribute: "from"] else { return nil }
        return try JID(from)
    }

    /// The `id` attribute, which replies copy (RFC 6120 §8.1.3).
    public var id: String? {
        get { element[attribute: "id"] }
        set { element[attribute: "id"] = newValue }
    }

    /// The `xml:lang` attribute: the default language of the stanza's
    /// human-readable text (RFC 6120 §8.1.5).
    public var language: String? {
        get { element[attribute: "lang", namespace: NS.xml] }
        set { element[attribute: "lang", namespace: NS.xml] = newValue }
    }

    /// Whether this is an error stanza (`type="error"`), which must never be
    /// answered with another error (RFC 6120 §8.3.1).
    public var isError: Bool { element[attribute: "type"] == "error" }

    /// The error carried by an error stanza: its `<error/>` child
    /// (RFC 6120 §8.3.2), or `nil` when it has none.
    public var error: StanzaError? {
        element.child("error").flatMap(StanzaError.init)
    }
}

// MARK: - Human-readable text with xml:lang (RFC 6120 §8.1.5)

extension StanzaView {
    /// The text of the child `name` in the stanza's default language: the
    /// first such child with no `xml:lang` or with the stanza's own, else the
    /// first one. Used for `<body/>`, `<subject/>` and `<status/>`, which may
    /// be repeated once per language (RFC 6121 §5.2.3, §4.7.2.2).
    func localizedText(_ name: String) -> String? {
        let candidates = element.elements.filter { $0.name == name && $0.namespace == element.namespace }
        let preferred = candidates.first {
            let childLanguage = $0[attribute: "lang", namespace: NS.xml]
            return childLanguage == nil || childLanguage == language
        }
        return (preferred ?? candidates.first)?.text
    }

    /// The texts of the children `name`, keyed by language: a child's own
    /// `xml:lang`, else the stanza's, else `""`. The first child of each
    /// language wins.
    func localizedTexts(_ name: String) -> [String: String] {
        var texts: [String: String] = [:]
        for child in element.elements where child.name == name && child.namespace == element.namespace {
            let key = child[attribute: "lang", namespace: NS.xml] ?? language ?? ""
            if texts[key] == nil { texts[key] = child.text }
        }
        return texts
    }

    /// Replaces every child `name` in the stanza's namespace with one
    /// holding `text`, or removes them all when `text` is `nil`.
    mutating func replaceChildText(_ name: String, with text: String?) {
        element.removeChildren(name, namespace: element.namespace)
        if let text {
            element.append(Element(name, namespace: element.namespace, children: [.text(text)]))
        }
    }
}

extension Element {
    /// A bare stanza element: `name` in `namespace` with the given `type`,
    /// `to` and `id` attributes, absent ones left out.
    static func stanza(
        _ name: String, namespace: String, type: String?, to: JID?, id: String?
    ) -> Element {
        var element = Element(name, namespace: namespace)
        element[attribute: "type"] = type
        element[attribute: "to"] = to?.description
        element[attribute: "id"] = id
        return element
    }
}
