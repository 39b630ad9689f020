/// Why an element could not be written as XML 1.0.
public enum XMLSerializationError: Error, Sendable, Hashable {
    /// Text or an attribute value holds a character XML 1.0 does not allow
    /// (controls other than tab, newline and carriage return; U+FFFE; U+FFFF).
    case invalidCharacter(UInt32)
    /// An element or attribute name that is not a valid XML name.
    case invalidName(String)
}

/// The namespaces in force where an element is written: what the enclosing
/// elements (usually just the stream header) already declared.
public struct XMLNamespaceScope: Sendable, Hashable {
    /// The default namespace (`jabber:client` inside a client stream).
    public var defaultNamespace: String
    /// Declared prefixes, namespace URI → prefix (the streams namespace →
    /// `stream`). The `xml` prefix is always bound and need not be listed.
    public var prefixes: [String: String]

    /// Creates a scope.
    public init(defaultNamespace: String = "", prefixes: [String: String] = [:]) {
        self.defaultNamespace = defaultNamespace
        self.prefixes = prefixes
    }

    /// The scope inside a stream that opened with `header`.
    public init(_ header: StreamHeader) {
        var prefixes: [String: String] = [:]
        for (prefix, uri) in header.prefixes { prefixes[uri] = prefix }
        self.init(defaultNamespace: header.defaultNamespace ?? "", prefixes: prefixes)
    }

    /// Outside any element: no default namespace, no prefixes.
    public static let document = XMLNamespaceScope()
}

/// Writes elements as XML 1.0 in UTF-8, with escaping and as few namespace
/// declarations as the scope allows.
///
/// Text escapes `&`, `<`, `>` and carriage return; attribute values (in
/// single quotes) also escape both quotes, tab and newline, so that every
/// value survives XML's end-of-line and attribute normalization unchanged.
public enum XMLSerializer {
    /// Appends `element` to `output`.
    /// - Throws: `XMLSerializationError` when a name or a character cannot be
    ///   written; `output` then holds a partial element and should be dropped.
    public static func write(
        _ element: Element, in scope: XMLNamespaceScope = .document, to output: inout [UInt8]
    ) throws(XMLSerializationError) {
        try writeElement(element, defaultNamespace: scope.defaultNamespace, prefixes: scope.prefixes, to: &output)
    }

    /// `element` as UTF-8 bytes.
    public static func bytes(
        _ element: Element, in scope: XMLNamespaceScope = .document
    ) throws(XMLSerializationError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        try write(element, in: scope, to: &output)
        return output
    }

    /// `element` as a string.
    public static func string(
        _ element: Element, in scope: XMLNamespaceScope = .document
    ) throws(XMLSerializationError) -> String {
        String(decoding: try bytes(element, in: scope), as: UTF8.self)
    }

    /// The XML declaration and opening tag of a stream (RFC 6120 §4.7),
    /// declaring the header's default namespace and prefixes.
    public static func streamOpening(_ header: StreamHeader) throws(XMLSerializationError) -> [UInt8] {
        var output = Array("<?xml version='1.0'?><".utf8)
        let prefix = header.prefixes.first { $0.value == header.namespace }?.key
        try checkName(header.name)
        let name = prefix.map { "\($0):\(header.name)" } ?? header.name
        output += name.utf8
        if let defaultNamespace = header.defaultNamespace {
            try writeAttribute("xmlns", defaultNamespace, to: &output)
        }
        for (prefix, uri) in header.prefixes.sorted(by: { $0.key < $1.key }) {
            try writeAttribute("xmlns:\(prefix)", uri, to: &output)
        }
        let scope = XMLNamespaceScope(header)
        var declarations: [String: String] = [:]
        for attribute in header.attributes {
            let name = try qualifiedAttributeName(attribute, scope.prefixes, &declarations, &output)
            try writeAttribute(name, attribute.value, to: &output)
        }
        output.append(UInt8(ascii: ">"))
        return output
    }

    /// The closing tag of a stream opened with `header`.
    public static func streamClosing(_ header: StreamHeader) -> [UInt8] {
        let prefix = header.prefixes.first { $0.value == header.namespace }?.key
        return Array("</\(prefix.map { "\($0):" } ?? "")\(header.name)>".utf8)
    }

    // MARK: - Elements

    private static func writeElement(
        _ element: Element, defaultNamespace: String, prefixes: [String: String], to output: inout [UInt8]
    ) throws(XMLSerializationError) {
        try checkName(element.name)
        let qualifiedName: String
        var innerDefault = defaultNamespace
        var declaresDefault = false
        if element.namespace == defaultNamespace {
            qualifiedName = element.name
        } else if element.namespace == xmlNamespace {
            // Bound to `xml` everywhere, and to nothing else (XML Namespaces §3).
            qualifiedName = "xml:\(element.name)"
        } else if let prefix = prefixes[element.namespace] {
            qualifiedName = "\(prefix):\(element.name)"
        } else {
            qualifiedName = element.name
            innerDefault = element.namespace
            declaresDefault = true
        }
        output.append(UInt8(ascii: "<"))
        output += qualifiedName.utf8
        if declaresDefault {
            try writeAttribute("xmlns", element.namespace, to: &output)
        }
        var declarations: [String: String] = [:]
        for attribute in element.attributes {
            let name = try qualifiedAttributeName(attribute, prefixes, &declarations, &output)
            try writeAttribute(name, attribute.value, to: &output)
        }
        guard !element.children.isEmpty else {
            output += "/>".utf8
            return
        }
        output.append(UInt8(ascii: ">"))
        for child in element.children {
            switch child {
            case .element(let child):
                try writeElement(child, defaultNamespace: innerDefault, prefixes: prefixes, to: &output)
            case .text(let text):
                try writeEscaped(text, inAttribute: false, to: &output)
            }
        }
        output += "</".utf8
        output += qualifiedName.utf8
        output.append(UInt8(ascii: ">"))
    }

    /// The name to write for `attribute`, declaring (into `output`, once per
    /// element) a prefix for a namespace the scope does not bind.
    private static func qualifiedAttributeName(
        _ attribute: Attribute, _ prefixes: [String: String], _ declarations: inout [String: String],
        _ output: inout [UInt8]
    ) throws(XMLSerializationError) -> String {
        try checkName(attribute.name)
        switch attribute.namespace {
        case "":
            return attribute.name
        case xmlNamespace:
            return "xml:\(attribute.name)"
        case let uri:
            if let prefix = prefixes[uri] ?? declarations[uri] { return "\(prefix):\(attribute.name)" }
            var prefix = "ns\(declarations.count)"
            while prefixes.values.contains(prefix) { prefix += "_" }
            declarations[uri] = prefix
            try writeAttribute("xmlns:\(prefix)", uri, to: &output)
            return "\(prefix):\(attribute.name)"
        }
    }

    /// The namespace bound to the `xml` prefix (XML Namespaces §3).
    private static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    private static func writeAttribute(
        _ name: String, _ value: String, to output: inout [UInt8]
    ) throws(XMLSerializationError) {
        output.append(UInt8(ascii: " "))
        output += name.utf8
        output += "='".utf8
        try writeEscaped(value, inAttribute: true, to: &output)
        output.append(UInt8(ascii: "'"))
    }

    // MARK: - Characters

    /// Appends `string` escaped, copying unescaped runs in one go.
    private static func writeEscaped(
        _ string: String, inAttribute: Bool, to output: inout [UInt8]
    ) throws(XMLSerializationError) {
        var string = string
        let invalid: UInt32? = string.withUTF8 { utf8 in
            var runStart = 0
            var index = 0
            while index < utf8.count {
                let byte = utf8[index]
                let replacement: StaticString
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case 0x0D: replacement = "&#13;"
                case UInt8(ascii: "'") where inAttribute: replacement = "&apos;"
                case UInt8(ascii: "\"") where inAttribute: replacement = "&quot;"
                case 0x09 where inAttribute: replacement = "&#9;"
                case 0x0A where inAttribute: replacement = "&#10;"
                case 0x09, 0x0A:
                    index += 1
                    continue
                case 0x00..<0x20:
                    return UInt32(byte)
                case 0xEF where index + 2 < utf8.count && utf8[index + 1] == 0xBF && utf8[index + 2] >= 0xBE:
                    return 0xFFFE + UInt32(utf8[index + 2] - 0xBE)  // U+FFFE or U+FFFF
                default:
                    index += 1
                    continue
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                replacement.withUTF8Buffer { output.append(contentsOf: $0) }
                index += 1
                runStart = index
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
            return nil
        }
        if let invalid { throw .invalidCharacter(invalid) }
    }

    /// Rejects local names that would break the markup: empty, or holding a
    /// character that cannot appear in an XML name (or a colon, which would
    /// read as a prefix). (Names from the parser
    /// are always valid; this guards names built in code.)
    private static func checkName(_ name: String) throws(XMLSerializationError) {
        guard !name.isEmpty,
            !name.utf8.contains(where: { byte in
                byte <= 0x20 || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
                    || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"")
                    || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ":")
            }),
            name.utf8.first != UInt8(ascii: "-"), name.utf8.first != UInt8(ascii: "."),
            !(name.utf8.first.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false)
        else { throw .invalidName(name) }
    }
}
