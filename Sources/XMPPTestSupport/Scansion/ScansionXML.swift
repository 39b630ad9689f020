import XMPPCore

/// The XML of scansion actions: parsing a fragment into stanzas, the
/// `${…}` variables, and writing stanzas back for messages.
enum ScansionXML {
    /// The namespace of scansion's own attributes (`scansion:strict`).
    /// Scripts use the prefix without declaring it; the parser declares it.
    static let namespace = "https://matthewwild.co.uk/projects/scansion"

    /// The value of an attribute or text that matches anything.
    static let any = "{scansion:any}"

    /// Parses `fragment` (one or more elements) as if it were inside a
    /// client stream: unprefixed elements are `jabber:client`, the
    /// `scansion:` prefix is bound, whitespace-only text is dropped.
    /// - Throws: `ScansionXMLError` when the fragment is not well-formed or
    ///   holds no element.
    static func parse(_ fragment: String) throws(ScansionXMLError) -> [Element] {
        let parser = XMLStreamParser(limits: .init(maxStanzaSize: 1 << 20))
        let header =
            "<stream:stream xmlns='\(NS.client)' xmlns:stream='\(NS.streams)' xmlns:scansion='\(namespace)'>"
        var elements: [Element] = []
        for event in parser.feed(header + fragment + "</stream:stream>") {
            switch event {
            case .element(let element): elements.append(element.droppingBlankText())
            case .error(let error): throw ScansionXMLError(message: "\(error)", xml: fragment)
            case .streamOpen, .streamClose: break
            }
        }
        guard !elements.isEmpty else { throw ScansionXMLError(message: "no element", xml: fragment) }
        return elements
    }

    /// Replaces each `${Name's full JID}` (the JID the client bound),
    /// `${Name's JID}` (its `jid:` property as written) and `${name}` (a
    /// value captured by `{scansion:capture:name}`) in `text`.
    /// - Parameters:
    ///   - jids: The `jid:` property of each client, by name.
    ///   - fullJIDs: The bound JID of each connected client, by name.
    ///   - captures: The values captured so far, by name.
    /// - Throws: `ScansionXMLError` for another variable, an unknown client,
    ///   the full JID of a client that is not bound, or a capture not made.
    static func substitute(
        _ text: String, jids: [String: String], fullJIDs: [String: JID], captures: [String: String] = [:]
    ) throws(ScansionXMLError) -> String {
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw ScansionXMLError(message: "unterminated ${", xml: text)
            }
            let variable = String(rest[start.upperBound..<end])
            if variable.hasSuffix("'s full JID"), let jid = fullJIDs[String(variable.dropLast("'s full JID".count))] {
                result += jid.description
            } else if variable.hasSuffix("'s JID"), let jid = jids[String(variable.dropLast("'s JID".count))] {
                result += jid
            } else if let value = captures[variable] {
                result += escaped(value)
            } else {
                throw ScansionXMLError(
                    message: "unknown variable, client not bound or value not captured: ${\(variable)}", xml: text)
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    /// `value` escaped for text and for attribute values in either quotes.
    static func escaped(_ value: String) -> String {
        var result = ""
        for character in value {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "'": result += "&apos;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }

    /// `element` as XML inside a client stream (no `xmlns='jabber:client'`
    /// on stanzas), for messages.
    static func string(_ element: Element) -> String {
        let scope = XMLNamespaceScope(defaultNamespace: NS.client, prefixes: [namespace: "scansion"])
        return (try? XMLSerializer.string(element, in: scope)) ?? String(describing: element)
    }
}

/// XML in a script that cannot be used.
struct ScansionXMLError: Error, CustomStringConvertible {
    /// What is wrong.
    var message: String
    /// The XML concerned.
    var xml: String

    var description: String { "\(message) in:\n\(xml)" }
}

extension Element {
    /// This element with whitespace-only text removed at every depth: the
    /// indentation of a script is not content.
    func droppingBlankText() -> Element {
        var copy = self
        copy.children = children.compactMap { node in
            switch node {
            case .element(let child): .element(child.droppingBlankText())
            case .text(let text): text.trimmingSpaces.isEmpty ? nil : node
            }
        }
        return copy
    }

    /// This element without scansion's own attributes, as it goes on the wire.
    func droppingScansionAttributes() -> Element {
        var copy = self
        copy.attributes.removeAll { $0.namespace == ScansionXML.namespace }
        copy.children = children.map { node in
            if case .element(let child) = node { .element(child.droppingScansionAttributes()) } else { node }
        }
        return copy
    }
}
