/// An XML element: the unit XMPP exchanges once a stream is open.
///
/// A value type, so a stanza can be handed from one event loop to another
/// without sharing mutable state. Names are local names; the namespace is
/// the resolved URI (`""` when the element is in no namespace). Prefixes are
/// not kept: the serializer chooses them (RFC 6120 §4.8 lets any prefix stand
/// for a namespace, except that `stream:` is conventional for the stream
/// namespace and the serializer honours that).
public struct Element: Sendable, Hashable {
    /// The local name, for example `message`.
    public var name: String
    /// The namespace URI, for example `jabber:client`; `""` for none.
    public var namespace: String
    /// The attributes, in document order.
    public var attributes: [Attribute]
    /// Child elements and text, in document order.
    public var children: [Node]

    /// Creates an element.
    public init(
        _ name: String, namespace: String, attributes: [Attribute] = [], children: [Node] = []
    ) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.children = children
    }

    /// Creates an element with unqualified attributes given as pairs.
    public init(
        _ name: String, namespace: String, attributes: KeyValuePairs<String, String>,
        children: [Node] = []
    ) {
        self.init(
            name, namespace: namespace,
            attributes: attributes.map { Attribute($0.key, $0.value) }, children: children)
    }
}

/// One attribute of an element.
public struct Attribute: Sendable, Hashable {
    /// The local name.
    public var name: String
    /// The namespace URI; `""` for an unprefixed attribute (the usual case).
    public var namespace: String
    /// The value, unescaped.
    public var value: String

    /// Creates an attribute.
    public init(_ name: String, namespace: String = "", _ value: String) {
        self.name = name
        self.namespace = namespace
        self.value = value
    }
}

/// A child of an element: another element, or character data.
public enum Node: Sendable, Hashable {
    case element(Element)
    case text(String)
}

extension Element {
    /// The value of the unqualified attribute `name`, or of the one in
    /// `namespace` when given.
    public subscript(attribute name: String, namespace namespace: String = "") -> String? {
        get {
            attributes.first { $0.name == name && $0.namespace == namespace }?.value
        }
        set {
            let index = attributes.firstIndex { $0.name == name && $0.namespace == namespace }
            switch (index, newValue) {
            case let (index?, value?): attributes[index].value = value
            case let (index?, nil): attributes.remove(at: index)
            case let (nil, value?): attributes.append(Attribute(name, namespace: namespace, value))
            case (nil, nil): break
            }
        }
    }

    /// The child elements, skipping text.
    public var elements: [Element] {
        children.compactMap { if case .element(let element) = $0 { element } else { nil } }
    }

    /// The first child element named `name`, in `namespace` when given,
    /// otherwise in this element's own namespace.
    public func child(_ name: String, namespace: String? = nil) -> Element? {
        let namespace = namespace ?? self.namespace
        for case .element(let element) in children
        where element.name == name && element.namespace == namespace {
            return element
        }
        return nil
    }

    /// The concatenated character data of the direct text children.
    public var text: String {
        var result = ""
        for case .text(let text) in children { result += text }
        return result
    }

    /// The text of the first child element named `name` (in `namespace`, or
    /// this element's own), or `nil` when there is no such child.
    public func childText(_ name: String, namespace: String? = nil) -> String? {
        child(name, namespace: namespace)?.text
    }

    /// Appends a child element.
    public mutating func append(_ element: Element) {
        children.append(.element(element))
    }

    /// Appends character data.
    public mutating func append(text: String) {
        children.append(.text(text))
    }

    /// Removes the child elements named `name` in `namespace`.
    public mutating func removeChildren(_ name: String, namespace: String) {
        removeChildren(named: name, namespace: namespace) { _ in true }
    }

    /// Removes the child elements `name` in `namespace` that `predicate`
    /// accepts; copies nothing when there are none (the common case).
    public mutating func removeChildren(
        named name: String, namespace: String, where predicate: (Element) -> Bool
    ) {
        func matches(_ node: Node) -> Bool {
            guard case .element(let element) = node else { return false }
            return element.name == name && element.namespace == namespace && predicate(element)
        }
        if children.contains(where: matches) { children.removeAll(where: matches) }
    }
}
