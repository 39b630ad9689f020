/// XEP-0059: Result Set Management. What a requester asks for in a
/// `<set xmlns='http://jabber.org/protocol/rsm'/>`.
public struct ResultSetRequest: Sendable, Hashable {
    /// `<max/>`: the most items to return; `nil` lets the responder choose.
    public var max: Int?
    /// `<after/>`: the page after the item with this id (§2.2).
    public var after: String?
    /// `<before/>`: the page before the item with this id (§2.3); `""` for
    /// an empty `<before/>`, the last page (§2.5).
    public var before: String?
    /// `<index/>`: the page starting at this position (§2.6).
    public var index: Int?

    /// Creates a request.
    public init(max: Int? = nil, after: String? = nil, before: String? = nil, index: Int? = nil) {
        self.max = max
        self.after = after
        self.before = before
        self.index = index
    }

    /// Reads a `<set/>` element.
    ///
    /// - Throws: `bad-request` when `<max/>` or `<index/>` is not a
    ///   non-negative whole number or `<after/>` is empty (§2.2 gives it an id).
    public init(_ set: Element) throws(StanzaError) {
        func number(_ name: String) throws(StanzaError) -> Int? {
            guard let text = set.childText(name, namespace: NS.rsm) else { return nil }
            guard let value = Int(text.trimmingSpaces), value >= 0 else {
                throw StanzaError(.badRequest, text: "<\(name)/> must be a whole number, not '\(text)'")
            }
            return value
        }
        max = try number("max")
        index = try number("index")
        after = set.childText("after", namespace: NS.rsm)
        before = set.childText("before", namespace: NS.rsm)
        if after == "" { throw StanzaError(.badRequest, text: "<after/> needs the id of an item") }
    }

    /// The `<set/>` element a requester sends.
    public var element: Element {
        var set = Element("set", namespace: NS.rsm)
        func add(_ name: String, _ text: String?) {
            guard let text else { return }
            set.append(Element(name, namespace: NS.rsm, children: text.isEmpty ? [] : [.text(text)]))
        }
        add("max", max.map(String.init))
        add("after", after)
        add("before", before)
        add("index", index.map(String.init))
        return set
    }
}

/// What a responder says about the page it returned (XEP-0059 §2.1): the
/// ids of its first and last items and the size of the whole set.
public struct ResultSetReply: Sendable, Hashable {
    /// The id of the first item of the page; `nil` for an empty page.
    public var first: String?
    /// The position of the first item in the whole set, if known.
    public var firstIndex: Int?
    /// The id of the last item of the page; `nil` for an empty page.
    public var last: String?
    /// The number of items in the whole set, if known.
    public var count: Int?

    /// Creates a reply.
    public init(first: String? = nil, firstIndex: Int? = nil, last: String? = nil, count: Int? = nil) {
        self.first = first
        self.firstIndex = firstIndex
        self.last = last
        self.count = count
    }

    /// Reads the `<set/>` of a reply; unreadable numbers count as absent.
    public init(_ set: Element) {
        first = set.childText("first", namespace: NS.rsm)
        firstIndex = set.child("first", namespace: NS.rsm)?[attribute: "index"].flatMap { Int($0) }
        last = set.childText("last", namespace: NS.rsm)
        count = set.childText("count", namespace: NS.rsm).flatMap { Int($0.trimmingSpaces) }
    }

    /// The `<set/>` element: `<first/>` and `<last/>` for a page with
    /// items, then `<count/>` (an empty page carries only the count).
    public var element: Element {
        var set = Element("set", namespace: NS.rsm)
        if let first {
            var element = Element("first", namespace: NS.rsm, children: [.text(first)])
            if let firstIndex { element[attribute: "index"] = String(firstIndex) }
            set.append(element)
        }
        if let last { set.append(Element("last", namespace: NS.rsm, children: [.text(last)])) }
        if let count { set.append(Element("count", namespace: NS.rsm, children: [.text(String(count))])) }
        return set
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks (XML white space).
    fileprivate var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[start...end]
    }
}
