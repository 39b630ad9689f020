import XMPPCore

/// One top-level piece of what a server wrote on a stream, with its exact
/// text: what `receives raw:` compares and what a client's parser sees.
struct ScansionWireUnit {
    enum Kind {
        /// The opening tag of a stream (with the XML declaration before
        /// it, if any).
        case header(StreamHeader)
        /// A stanza or nonza.
        case element(Element)
        /// The closing tag of the stream.
        case close
        /// Bytes that do not parse; the reason.
        case malformed(String)
    }

    /// The bytes as written, decoded as UTF-8; whitespace between units
    /// (keepalives) belongs to none.
    var raw: String
    var kind: Kind

    var element: Element? {
        if case .element(let element) = kind { element } else { nil }
    }
}

/// Splits the bytes a server writes into top-level units, however they
/// are chunked, and parses each with the namespaces of the stream.
///
/// The split is a small scan of tags and depth, enough for the
/// well-formed output of our serializer (comments, processing instructions
/// and CDATA are skipped over); the parser then checks each unit.
final class ScansionWireReader {
    private var buffer: [UInt8] = []
    private let parser = XMLStreamParser(limits: .init(maxStanzaSize: 4 << 20))

    /// A reader for a fresh connection, or, with `insideStream`, for one
    /// whose stream header was already read by someone else (a client the
    /// runner logged in through `TestClient`).
    init(insideStream: Bool) {
        if insideStream {
            _ = parser.feed("<stream:stream xmlns='\(NS.client)' xmlns:stream='\(NS.streams)'>")
        }
    }

    /// The units completed by `bytes` (an incomplete tail is kept).
    func feed(_ bytes: [UInt8]) -> [ScansionWireUnit] {
        buffer += bytes
        var units: [ScansionWireUnit] = []
        var start = 0
        while true {
            while start < buffer.count, Self.isSpace(buffer[start]) { start += 1 }
            guard start < buffer.count, let (end, kind) = Self.scan(buffer, from: start) else { break }
            units.append(parse(buffer[start..<end], kind))
            start = end
        }
        buffer.removeFirst(start)
        return units
    }

    private func parse(_ bytes: ArraySlice<UInt8>, _ kind: RawKind) -> ScansionWireUnit {
        let raw = String(decoding: bytes, as: UTF8.self)
        if kind == .text { return ScansionWireUnit(raw: raw, kind: .malformed("text outside any element")) }
        if kind == .header { parser.reset() }
        let events = parser.feed(Array(bytes))
        switch (kind, events.first, events.count) {
        case (.header, .streamOpen(let header), 1): return ScansionWireUnit(raw: raw, kind: .header(header))
        case (.element, .element(let element), 1): return ScansionWireUnit(raw: raw, kind: .element(element))
        case (.close, .streamClose, 1): return ScansionWireUnit(raw: raw, kind: .close)
        default: return ScansionWireUnit(raw: raw, kind: .malformed("parsed as \(events)"))
        }
    }

    // MARK: - Scanning

    enum RawKind { case header, element, close, text }

    /// The end (exclusive) and kind of the unit that begins at `start` (not
    /// a space), or nil when its last byte has not arrived yet.
    static func scan(_ bytes: [UInt8], from start: Int) -> (Int, RawKind)? {
        var index = start
        var depth = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                guard let next = bytes[index...].firstIndex(of: UInt8(ascii: "<")) else { return nil }
                if depth == 0, !bytes[index..<next].allSatisfy(isSpace) { return (next, .text) }
                index = next
                continue
            }
            for (open, close) in [("<?", "?>"), ("<!--", "-->"), ("<![CDATA[", "]]>"), ("<!", ">")]
            where has(bytes, open, at: index) {
                guard let end = find(close, in: bytes, from: index + open.utf8.count) else { return nil }
                index = end
                break
            }
            if index < bytes.count, bytes[index] != UInt8(ascii: "<") { continue }
            guard let end = tagEnd(bytes, from: index) else { return nil }
            if bytes[index + 1] == UInt8(ascii: "/") {
                if depth == 0 { return (end, .close) }
                depth -= 1
                if depth == 0 { return (end, .element) }
            } else if bytes[end - 2] == UInt8(ascii: "/") {
                if depth == 0 { return (end, .element) }
            } else {
                let name = bytes[(index + 1)..<end].prefix { !isSpace($0) && $0 != UInt8(ascii: ">") }
                let text = String(decoding: name, as: UTF8.self)
                if depth == 0, text == "stream" || text.hasSuffix(":stream") { return (end, .header) }
                depth += 1
            }
            index = end
        }
        return nil
    }

    /// The index after the `>` of the tag at `start`, skipping quoted
    /// attribute values.
    private static func tagEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var quote: UInt8?
        for index in start..<bytes.count {
            let byte = bytes[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index + 1
            }
        }
        return nil
    }

    private static func has(_ bytes: [UInt8], _ text: String, at index: Int) -> Bool {
        bytes[index...].starts(with: text.utf8)
    }

    /// The index after the first `text` at or after `start`.
    private static func find(_ text: String, in bytes: [UInt8], from start: Int) -> Int? {
        let needle = Array(text.utf8)
        var index = start
        while index + needle.count <= bytes.count {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return index + needle.count }
            index += 1
        }
        return nil
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// Raw-text patterns of `receives raw:`: the text itself, where
/// `{scansion:any}` matches any run of characters (none included).
enum ScansionRawPattern {
    /// Whether `text` matches `pattern` as a whole.
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let pieces = pattern.components(separatedBy: ScansionXML.any)
        guard pieces.count > 1 else { return pattern == text }
        guard text.hasPrefix(pieces[0]), text.dropFirst(pieces[0].count).hasSuffix(pieces.last!) else { return false }
        var rest = text.dropFirst(pieces[0].count).dropLast(pieces.last!.count)
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }
}

/// What XMPPFramework 4.1's parser needs from a server's bytes
/// (`XMPPFRAMEWORK.md` §1): it matches names with their prefix, so
/// the stream's elements must be written `stream:stream`,
/// `stream:features` and `stream:error` and every other top-level element
/// unprefixed; it needs `version='1.0'` in the header, and takes the
/// element right after each header as the features, whatever it is.
struct XMPPFrameworkWireCheck {
    /// Whether a header was read and its features not yet.
    private(set) var awaitsFeatures = false

    /// Why XMPPFramework would misread `unit`, or nil.
    mutating func problem(with unit: ScansionWireUnit) -> String? {
        switch unit.kind {
        case .header(let header):
            awaitsFeatures = true
            var tag = Substring(unit.raw)
            if tag.hasPrefix("<?"), let end = tag.range(of: "?>") { tag = tag[end.upperBound...] }
            guard tag.hasPrefix("<stream:stream ") || tag.hasPrefix("<stream:stream>") else {
                return "the stream header must be written <stream:stream: XMPPFramework matches the prefix"
            }
            guard header[attribute: "version"] == "1.0" else {
                return "the stream header needs version='1.0', else XMPPFramework falls back to pre-XMPP 1.0 login"
            }
            guard header.defaultNamespace == NS.client else { return "the stream's namespace must be jabber:client" }
            return nil
        case .element(let element):
            let wasAwaiting = awaitsFeatures
            awaitsFeatures = false
            if wasAwaiting, element.name != "features" || element.namespace != NS.streams {
                return "XMPPFramework takes the element after a stream header as the features; got <\(element.name)>"
            }
            let name = element.namespace == NS.streams ? "stream:\(element.name)" : element.name
            guard let next = unit.raw.dropFirst(1 + name.count).first, unit.raw.hasPrefix("<" + name),
                next == " " || next == ">" || next == "/"
            else {
                return "XMPPFramework matches names with their prefix: expected the tag to begin <\(name)"
            }
            return nil
        case .close:
            return unit.raw == "</stream:stream>" ? nil : "the stream must close with </stream:stream>"
        case .malformed(let reason):
            return "not well-formed: \(reason)"
        }
    }
}
