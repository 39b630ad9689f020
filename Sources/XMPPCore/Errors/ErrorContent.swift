/// The children that stream errors (RFC 6120 §4.9.2) and stanza errors
/// (RFC 6120 §8.3.2) have in common, and their reading and writing.
///
/// Both kinds of `<error/>` hold, in this order: one defined-condition
/// element in the kind's condition namespace, optionally with character data
/// (`see-other-host`, `gone`, `redirect`); an optional `<text/>` in the same
/// namespace, with an optional `xml:lang`; and an optional
/// application-specific condition element in some other namespace.
/// `StanzaError` and `StreamError` keep the typed parts and delegate the XML
/// here, so the two cannot drift apart.
struct ErrorContent: Sendable {
    /// The defined condition's element name, for example `bad-request`.
    var condition: String
    /// Character data inside the condition element, or `nil` for an empty one.
    var conditionText: String?
    /// The human-readable `<text/>`.
    var text: String?
    /// The `xml:lang` of `text`.
    var language: String?
    /// The application-specific condition element.
    var applicationCondition: Element?
}

extension ErrorContent {
    /// Reads the children of an `<error/>` element whose defined conditions
    /// live in `conditionNamespace`.
    ///
    /// `condition` is `""` when no defined condition is present; the caller
    /// maps that, like any name it does not know, to `undefined-condition`.
    /// Empty or all-whitespace condition text reads as `nil`.
    init(parsing error: Element, conditionNamespace: String) {
        let conditionElement = error.elements.first {
            $0.namespace == conditionNamespace && $0.name != "text"
        }
        let textElement = error.child("text", namespace: conditionNamespace)
        let payload = conditionElement.map { $0.text.trimmingXMLWhitespace() } ?? ""
        self.init(
            condition: conditionElement?.name ?? "",
            conditionText: payload.isEmpty ? nil : payload,
            text: textElement?.text,
            language: textElement?[attribute: "lang", namespace: NS.xml],
            applicationCondition: error.elements.first { $0.namespace != conditionNamespace })
    }

    /// The children to put inside an `<error/>` element, with the defined
    /// condition and `<text/>` in `conditionNamespace`.
    func children(conditionNamespace: String) -> [Node] {
        var conditionElement = Element(condition, namespace: conditionNamespace)
        if let conditionText { conditionElement.append(text: conditionText) }
        var children: [Node] = [.element(conditionElement)]
        if let text {
            var textElement = Element("text", namespace: conditionNamespace)
            textElement[attribute: "lang", namespace: NS.xml] = language
            textElement.append(text: text)
            children.append(.element(textElement))
        }
        if let applicationCondition { children.append(.element(applicationCondition)) }
        return children
    }
}

extension String {
    /// The string without leading and trailing XML whitespace (space, tab,
    /// CR, LF: XML 1.0 §2.3 production `S`), so an indented condition
    /// payload or presence priority reads the same as a compact one.
    func trimmingXMLWhitespace() -> String {
        let isXMLWhitespace: (Unicode.Scalar) -> Bool = {
            $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n"
        }
        guard let first = unicodeScalars.firstIndex(where: { !isXMLWhitespace($0) }),
            let last = unicodeScalars.lastIndex(where: { !isXMLWhitespace($0) })
        else { return "" }
        return String(unicodeScalars[first...last])
    }
}
