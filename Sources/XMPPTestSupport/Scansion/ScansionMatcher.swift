import XMPPCore

/// Whether a received stanza matches the one a script expects, by
/// scansion's rules (its documentation, "Client: Matching rules"):
///
/// * Names and namespaces are equal.
/// * Each element is matched in one of two modes. An element in the
///   stream's default namespace (`jabber:client`: `message`, `presence`,
///   `iq`, `body`, `status`…) is matched non-strictly; an element in a
///   namespace of its own (`jabber:iq:roster`, `urn:xmpp:delay`…) strictly.
///   `scansion:strict='true'` or `'false'` on an expected element overrides
///   this for that element (its children follow their own namespaces).
/// * Attributes: every expected attribute is present with an equal value,
///   `{scansion:any}` standing for any value. Strict: the received element
///   has no other attributes. Non-strict: others are ignored (the `from`
///   and `to` servers add, an `id`, a presence `type` of `unavailable`…).
/// * Child elements: strict, the same number, matched pairwise in order;
///   non-strict, each expected child matches a different received child in
///   any order, and other received children are ignored.
/// * Text (whitespace-only text never counts): expected text must equal
///   the received text, `{scansion:any}` matching any. An element expected
///   with no text must have none when strict; non-strict, text is ignored.
enum ScansionMatcher {
    /// Why `received` does not match `expected`, or nil when it does.
    /// - Returns: The first difference found, with the path to it
    ///   (`iq/query/item: …`).
    static func mismatch(expected: Element, received: Element) -> String? {
        var captures: [String: String] = [:]
        return mismatch(expected: expected, received: received, captures: &captures)
    }

    /// Why `received` does not match `expected`, or nil when it does; then
    /// the values of `{scansion:capture:…}` placeholders are in `captures`.
    static func mismatch(expected: Element, received: Element, captures: inout [String: String]) -> String? {
        var found: [String: String] = [:]
        let problem = mismatch(expected, received.droppingBlankText(), path: expected.name, &found)
        if problem == nil { captures.merge(found) { _, new in new } }
        return problem
    }

    /// The name in a `{scansion:capture:name}` placeholder.
    static func captureName(_ value: String) -> String? {
        guard value.hasPrefix(capturePrefix), value.hasSuffix("}"), value.count > capturePrefix.count + 1 else {
            return nil
        }
        return String(value.dropFirst(capturePrefix.count).dropLast())
    }

    private static let capturePrefix = "{scansion:capture:"

    /// Whether an expected value matches `got`, noting a capture.
    private static func valueMatches(_ wanted: String, _ got: String, _ captures: inout [String: String]) -> Bool {
        if let name = captureName(wanted) {
            captures[name] = got
            return true
        }
        return wanted == ScansionXML.any || wanted == got
    }

    private static func mismatch(
        _ expected: Element, _ received: Element, path: String, _ captures: inout [String: String]
    ) -> String? {
        guard expected.name == received.name, expected.namespace == received.namespace else {
            let got = "<\(received.name)> in \(received.namespace)"
            return "\(path): expected <\(expected.name)> in \(expected.namespace), got \(got)"
        }
        let strict = isStrict(expected)
        if let problem = attributeMismatch(expected, received, strict: strict, &captures) {
            return "\(path): \(problem)"
        }
        if let problem = textMismatch(expected, received, strict: strict, &captures) {
            return "\(path): \(problem)"
        }
        let expectedChildren = expected.elements
        let receivedChildren = received.elements
        if strict {
            guard expectedChildren.count == receivedChildren.count else {
                let names = receivedChildren.map { "<\($0.name)>" }.joined(separator: " ")
                return "\(path): expected \(expectedChildren.count) child elements, got \(names)"
            }
            for (wanted, got) in zip(expectedChildren, receivedChildren) {
                if let problem = mismatch(wanted, got, path: "\(path)/\(wanted.name)", &captures) { return problem }
            }
            return nil
        }
        var used = Array(repeating: false, count: receivedChildren.count)
        if assign(expectedChildren[...], to: receivedChildren, used: &used, &captures) { return nil }
        return unmatched(expectedChildren, among: receivedChildren, path: path)
    }

    /// Explains a failed non-strict child assignment by the first expected
    /// child that matches no received child: why the one received child of
    /// its name that nothing else matched differs, or else that none matches.
    private static func unmatched(_ expected: [Element], among received: [Element], path: String) -> String {
        var scratch: [String: String] = [:]
        let mismatch = { (wanted: Element, got: Element, path: String) in
            Self.mismatch(wanted, got, path: path, &scratch)
        }
        let matchesSome = { (wanted: Element) in received.contains { mismatch(wanted, $0, "") == nil } }
        guard let lonely = expected.first(where: { !matchesSome($0) }) else {
            return "\(path): the expected children match, but not each a different received child"
        }
        let matched = { (got: Element) in expected.contains { mismatch($0, got, "") == nil } }
        let namesakes = received.filter { $0.name == lonely.name && $0.namespace == lonely.namespace && !matched($0) }
        if namesakes.count == 1, let problem = mismatch(lonely, namesakes[0], "\(path)/\(lonely.name)") {
            return problem
        }
        return "\(path): no received child matches \(ScansionXML.string(lonely))"
    }

    /// Whether `element` is matched strictly (see the type's rules).
    private static func isStrict(_ element: Element) -> Bool {
        switch element[attribute: "strict", namespace: ScansionXML.namespace] {
        case "true": true
        case "false": false
        default: element.namespace != NS.client
        }
    }

    private static func attributeMismatch(
        _ expected: Element, _ received: Element, strict: Bool, _ captures: inout [String: String]
    ) -> String? {
        let wanted = expected.attributes.filter { $0.namespace != ScansionXML.namespace }
        for attribute in wanted {
            let name = qualifiedName(attribute)
            guard let value = received[attribute: attribute.name, namespace: attribute.namespace] else {
                return "attribute \(name) missing (expected '\(attribute.value)')"
            }
            if !valueMatches(attribute.value, value, &captures) {
                return "attribute \(name) is '\(value)', expected '\(attribute.value)'"
            }
        }
        if strict {
            let extra = received.attributes.filter { got in
                !wanted.contains { $0.name == got.name && $0.namespace == got.namespace }
            }
            if !extra.isEmpty {
                return "unexpected attributes "
                    + extra.map { "\(qualifiedName($0))='\($0.value)'" }.joined(separator: " ")
            }
        }
        return nil
    }

    private static func textMismatch(
        _ expected: Element, _ received: Element, strict: Bool, _ captures: inout [String: String]
    ) -> String? {
        let wanted = expected.text
        let got = received.text
        if valueMatches(wanted, got, &captures) { return nil }
        if wanted.isEmpty && !strict { return nil }
        return "text is '\(got)', expected '\(wanted)'"
    }

    /// Matches each of `expected` with a different unused element of
    /// `received`, backtracking when an early choice blocks a later one.
    /// Captures are kept only from the assignment that succeeds.
    private static func assign(
        _ expected: ArraySlice<Element>, to received: [Element], used: inout [Bool], _ captures: inout [String: String]
    ) -> Bool {
        guard let first = expected.first else { return true }
        for index in received.indices where !used[index] {
            var tried = captures
            guard mismatch(first, received[index], path: "", &tried) == nil else { continue }
            used[index] = true
            if assign(expected.dropFirst(), to: received, used: &used, &tried) {
                captures = tried
                return true
            }
            used[index] = false
        }
        return false
    }

    private static func qualifiedName(_ attribute: Attribute) -> String {
        switch attribute.namespace {
        case "": attribute.name
        case NS.xml: "xml:\(attribute.name)"
        default: "{\(attribute.namespace)}\(attribute.name)"
        }
    }
}
