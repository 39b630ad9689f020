import CExpat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An incremental, namespace-aware parser for one XMPP XML stream, on Expat.
///
/// Feed it bytes as they come off the wire, split anywhere (even inside a
/// multi-byte UTF-8 character); it reports the stream's opening tag, each
/// complete top-level element as an `Element` tree, and the closing tag.
///
/// It enforces the restricted XML of RFC 6120 §11.1 (no comments, processing
/// instructions, DTDs or entity declarations, hence no entity expansion at
/// all) and the configured `Limits`, so a hostile peer costs at most
/// `maxStanzaSize` plus one feed slice of memory.
///
/// Between stanzas, ``releaseWhileIdle()`` frees Expat's memory (most of
/// what an idle stream costs); the next feed recreates it.
///
/// Not thread-safe: one parser belongs to one session on one event loop.
public final class XMLStreamParser {
    /// Bounds on what one peer may make the parser hold.
    public struct Limits: Sendable, Hashable {
        /// The largest top-level element, in bytes of its serialized form
        /// (default 256 KiB). The stream header counts as one unit too.
        public var maxStanzaSize: Int
        /// The deepest nesting inside a top-level element, which has depth 1
        /// (default 64).
        public var maxDepth: Int
        /// The most attributes on one element (default 64).
        public var maxAttributes: Int
        /// The largest single piece of markup, such as one start tag with
        /// all its attributes, in bytes (default 16 KiB; two maximal JIDs
        /// take 6 KiB).
        ///
        /// Expat rescans an unfinished token from its start on every feed
        /// (its reparse deferral, which would soften that, is turned off:
        /// see `ExpatReparseDeferral`), so a peer trickling a huge start tag
        /// a byte at a time would cost time quadratic in its size; this
        /// bound keeps the cost of each byte constant.
        public var maxTokenSize: Int

        /// Creates limits; the defaults suit an authenticated client stream.
        public init(
            maxStanzaSize: Int = 256 * 1024, maxDepth: Int = 64, maxAttributes: Int = 64,
            maxTokenSize: Int = 16 * 1024
        ) {
            precondition(maxStanzaSize > 0 && maxDepth > 0 && maxAttributes >= 0 && maxTokenSize > 0)
            self.maxStanzaSize = maxStanzaSize
            self.maxDepth = maxDepth
            self.maxAttributes = maxAttributes
            self.maxTokenSize = maxTokenSize
        }
    }

    /// The limits in force; may be changed between feeds (for example raised
    /// once a stream is authenticated).
    public var limits: Limits

    /// The Expat parser; `nil` while released between stanzas.
    private var expat: XML_Parser?
    /// The stream header's namespace declarations as an opening tag of our
    /// own: fed to a recreated Expat, it puts the next bytes in the same
    /// scope as the original header did. `nil` before the header.
    private var streamPrologue: [UInt8]?
    private var events: [XMLStreamEvent] = []
    fileprivate private(set) var failure: XMLStreamError?
    private var streamOpened = false
    fileprivate private(set) var streamClosed = false
    /// The open elements of the current top-level element, outermost first.
    private var stack: [Element] = []
    /// Character data not yet attached to `stack.last`.
    private var text: [UInt8] = []
    /// Namespace declarations seen since the last start tag.
    private var pendingDeclarations: [(prefix: String?, uri: String)] = []
    /// Bytes given to Expat since creation or the last reset.
    private var bytesFed = 0
    /// The stream's first byte, kept back while it is all that has come:
    /// Expat decides the encoding from the first bytes of its first call,
    /// so it is given two at once (see `refuseUTF16`).
    private var heldFirstByte: UInt8?
    /// Where the unit being parsed (a stanza, or the header) began.
    private var unitStart = 0
    /// Bytes the unit being parsed grows by when serialized again: our
    /// serializer declares a namespace on each element that leaves its
    /// parent's (and on each element with a namespaced attribute), where
    /// the peer may have bound a long one to a prefix once. Counted against
    /// `maxStanzaSize`, so that what we write stays linear in what we read.
    private var namespaceOverhead = 0
    /// Bytes of namespace declarations on the start tag being parsed: a
    /// declaration the peer wrote inline is paid for in its own input.
    private var declaredOnThisTag = 0
    /// Where the last construct Expat reported ended: what follows is a
    /// token Expat has not finished.
    private var lastEventEnd = 0
    /// Namespace URIs seen so far, so that each is allocated once per stream
    /// (or per burst of stanzas, when the parser is released in between).
    private var namespaces = NamespaceTable()

    /// The separator Expat puts between a namespace URI and a local name;
    /// a control character, so no well-formed URI contains it.
    fileprivate static let separator: CChar = 0x01

    /// The Expat this process runs, and whether it defers reparsing (which
    /// every parser turns off), for `--version` and bug reports:
    /// `expat_2.5.0, reparse deferral turned off`.
    public static var libraryDescription: String {
        let version = String(cString: XML_ExpatVersion())
        return version + (ExpatReparseDeferral.isSupported ? ", reparse deferral turned off" : ", no reparse deferral")
    }

    /// Creates a parser with the given limits.
    public init(limits: Limits = Limits()) {
        self.limits = limits
        createExpat()
    }

    deinit {
        if let expat { XML_ParserFree(expat) }
    }

    private func createExpat() {
        guard let parser = XML_ParserCreateNS("UTF-8", XML_Char(Self.separator)) else {
            fatalError("Expat could not allocate a parser")
        }
        expat = parser
        installHandlers(on: parser)
    }

    /// Expat inside a feed, where every handler runs.
    private var parsing: XML_Parser { expat! }

    /// Forgets everything and expects a new stream header, as after STARTTLS
    /// or SASL success (RFC 6120 §5.4.3.3, §6.4.6). Limits are kept.
    public func reset() {
        if let expat {
            guard XML_ParserReset(expat, "UTF-8") == XML_TRUE else {
                fatalError("Expat could not reset a parser")
            }
            installHandlers(on: expat)
        } else {
            createExpat()
        }
        streamPrologue = nil
        events = []
        failure = nil
        streamOpened = false
        streamClosed = false
        stack = []
        text = []
        pendingDeclarations = []
        bytesFed = 0
        declaredOnThisTag = 0
        heldFirstByte = nil
        unitStart = 0
        namespaceOverhead = 0
        lastEventEnd = 0
        namespaces = NamespaceTable()
    }

    /// Parses `bytes` and returns what they completed. After an `.error`
    /// or `.streamClose` event, further feeds return nothing until
    /// `reset()`.
    public func feed(_ bytes: UnsafeRawBufferPointer) -> [XMLStreamEvent] {
        guard failure == nil, !streamClosed else { return [] }
        if expat == nil {
            guard !bytes.isEmpty else { return [] }
            recreateExpat()
        }
        if bytesFed == 0 {
            if let held = heldFirstByte {
                heldFirstByte = nil
                return feed([held] + Array(bytes))
            }
            switch bytes.count {
            case 0: return []
            case 1:
                heldFirstByte = bytes[0]
                return []
            default: refuseUTF16(startingWith: bytes)
            }
        }
        // Expat keeps an unfinished token in memory; feeding in slices lets
        // an oversized unit be refused before the rest of it is even read.
        let sliceSize = 64 * 1024
        var offset = 0
        while offset < bytes.count, failure == nil {
            let count = min(sliceSize, bytes.count - offset)
            let slice = bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: CChar.self)
            if XML_Parse(parsing, slice, Int32(count), 0) != XML_STATUS_OK {
                recordExpatError()
            }
            bytesFed += count
            offset += count
            if streamClosed { break }
            if failure == nil, bytesFed - unitStart > limits.maxStanzaSize {
                fail(.policyViolation, "stanza larger than \(limits.maxStanzaSize) bytes")
            } else if failure == nil, bytesFed - lastEventEnd > limits.maxTokenSize {
                fail(.policyViolation, "markup token larger than \(limits.maxTokenSize) bytes")
            }
        }
        if let failure { events.append(.error(failure)) }
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Parses `bytes`; see `feed(_:)` for raw buffers.
    public func feed(_ bytes: [UInt8]) -> [XMLStreamEvent] {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Parses the UTF-8 form of `string`; see `feed(_:)` for raw buffers.
    public func feed(_ string: String) -> [XMLStreamEvent] {
        var string = string
        return string.withUTF8 { feed(UnsafeRawBufferPointer($0)) }
    }

    // MARK: - Releasing between stanzas

    /// Whether the parser stands between two top-level elements of an open
    /// stream with nothing held: no element begun, and every byte fed so far
    /// part of something Expat reported (none in an unfinished token or
    /// character).
    private var isBetweenStanzas: Bool {
        failure == nil && streamOpened && !streamClosed && stack.isEmpty && text.isEmpty
            && heldFirstByte == nil && lastEventEnd == bytesFed
    }

    /// Frees Expat and the buffers kept for reuse, if the parser stands
    /// between stanzas with nothing held; otherwise does nothing (a header
    /// that bound its own namespace to two names is never released, as
    /// either might close it). The next non-empty feed
    /// creates a fresh Expat and first feeds it an opening tag of our own
    /// with the stream header's namespace declarations (its default
    /// namespace and every prefix it bound), so the bytes that follow parse
    /// exactly as they would have. For a stream that sits idle between
    /// stanzas, which is what most streams do most of the time.
    ///
    /// - Returns: Whether the parser was released (or already was).
    @discardableResult
    public func releaseWhileIdle() -> Bool {
        guard let expat else { return true }
        guard isBetweenStanzas, streamPrologue != nil else { return false }
        XML_ParserFree(expat)
        self.expat = nil
        events = []
        stack = []
        text = []
        pendingDeclarations = []
        namespaces = NamespaceTable()
        return true
    }

    /// Creates Expat again after ``releaseWhileIdle()`` and feeds it the
    /// stream prologue; the header event that yields is dropped, and byte
    /// offsets start after it.
    private func recreateExpat() {
        guard let prologue = streamPrologue else { preconditionFailure("released before the stream header") }
        createExpat()
        streamOpened = false
        bytesFed = 0
        unitStart = 0
        lastEventEnd = 0
        let status = prologue.withUnsafeBytes { bytes in
            XML_Parse(parsing, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(bytes.count), 0)
        }
        precondition(status == XML_STATUS_OK && streamOpened && failure == nil, "stream prologue did not parse")
        bytesFed = prologue.count
        events.removeAll()
    }

    // MARK: - Failure

    fileprivate func fail(_ kind: XMLStreamError.Kind, _ detail: String) {
        guard failure == nil else { return }
        failure = XMLStreamError(kind, detail)
        XML_StopParser(parsing, XML_FALSE)
    }

    /// Refuses a stream that Expat would read as UTF-16 even though it was
    /// told the input is UTF-8: Expat honours a byte order mark, and takes
    /// a NUL among the first two bytes for UTF-16 without one. 0xFE and
    /// 0xFF never occur in UTF-8 and NUL never in XML, so neither can start
    /// a valid stream.
    ///
    /// - Parameter bytes: The stream's first bytes, at least two: `feed`
    ///   holds a lone first byte back, so that the answer (Expat's and
    ///   ours) does not depend on how the stream was split.
    private func refuseUTF16(startingWith bytes: UnsafeRawBufferPointer) {
        if bytes[0] >= 0xFE {
            fail(.unsupportedEncoding, "UTF-16 byte order mark; XMPP streams are UTF-8")
        } else if bytes[0] == 0 || bytes[1] == 0 {
            fail(.unsupportedEncoding, "NUL at the start of the stream, as in UTF-16; XMPP streams are UTF-8")
        }
    }

    private func recordExpatError() {
        let code = XML_GetErrorCode(parsing)
        guard code != XML_ERROR_ABORTED else { return }  // we stopped it, and said why
        let message = XML_ErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
        let detail = "\(message) at line \(XML_GetCurrentLineNumber(parsing))"
        fail(code == XML_ERROR_UNBOUND_PREFIX ? .badNamespacePrefix : .notWellFormed, detail)
    }

    /// The absolute offset just past the construct Expat is reporting,
    /// which every handler records as `lastEventEnd`.
    private func markEventEnd() -> Int {
        lastEventEnd = Int(XML_GetCurrentByteIndex(parsing)) + Int(XML_GetCurrentByteCount(parsing))
        return lastEventEnd
    }

    /// Refuses the construct Expat is reporting, `what`, when it is one
    /// token larger than `maxTokenSize`. `feed` refuses such a token while
    /// it is still arriving, so one that arrives in a single feed must be
    /// refused too, or the outcome would depend on how the stream was split.
    ///
    /// - Returns: Whether the parser failed.
    private func refuseOversizedToken(_ what: String) -> Bool {
        guard Int(XML_GetCurrentByteCount(parsing)) > limits.maxTokenSize else { return false }
        fail(.policyViolation, "\(what) larger than \(limits.maxTokenSize) bytes")
        return true
    }

    // MARK: - Expat events

    fileprivate func startElement(
        _ qualifiedName: UnsafePointer<XML_Char>, _ attributes: UnsafeMutablePointer<UnsafePointer<XML_Char>?>
    ) {
        let end = markEventEnd()
        guard !refuseOversizedToken("start tag") else { return }
        flushText()
        var count = 0
        while attributes[count] != nil { count += 2 }
        count /= 2
        guard count <= limits.maxAttributes else {
            return fail(.policyViolation, "more than \(limits.maxAttributes) attributes on one element")
        }
        guard stack.count < limits.maxDepth || !streamOpened else {
            return fail(.policyViolation, "elements nested deeper than \(limits.maxDepth)")
        }
        let (namespace, name) = splitName(qualifiedName)
        var parsed: [Attribute] = []
        parsed.reserveCapacity(count)
        var growth = 0
        for index in 0..<count {
            let (attributeNamespace, attributeName) = splitName(attributes[2 * index]!)
            parsed.append(Attribute(attributeName, namespace: attributeNamespace, String(cString: attributes[2 * index + 1]!)))
            if !attributeNamespace.isEmpty, attributeNamespace != NS.xml { growth += attributeNamespace.utf8.count + 16 }
        }
        // Written out, an element declares its namespace when it differs
        // from the default in effect, which is the namespace of the nearest
        // ancestor outside the XML namespace: `xml:` needs no declaration
        // and changes no default (XML Namespaces §3).
        if namespace != NS.xml, let parent = stack.last(where: { $0.namespace != NS.xml }), parent.namespace != namespace {
            growth += namespace.utf8.count + 10
        }
        namespaceOverhead += max(0, growth - declaredOnThisTag)
        declaredOnThisTag = 0
        guard end - unitStart + namespaceOverhead <= limits.maxStanzaSize else {
            return fail(.policyViolation, "stanza larger than \(limits.maxStanzaSize) bytes once its namespaces are written out")
        }
        if !streamOpened {
            openStream(name: name, namespace: namespace, attributes: parsed, end: end)
        } else {
            stack.append(Element(name, namespace: namespace, attributes: parsed))
        }
        if !pendingDeclarations.isEmpty { pendingDeclarations.removeAll(keepingCapacity: true) }
    }

    private func openStream(name: String, namespace: String, attributes: [Attribute], end: Int) {
        streamOpened = true
        var header = StreamHeader(
            name: name, namespace: namespace, defaultNamespace: nil, prefixes: [:], attributes: attributes)
        for declaration in pendingDeclarations {
            if let prefix = declaration.prefix {
                header.prefixes[prefix] = declaration.uri
            } else {
                header.defaultNamespace = declaration.uri
            }
        }
        guard end - unitStart <= limits.maxStanzaSize else {
            return fail(.policyViolation, "stream header larger than \(limits.maxStanzaSize) bytes")
        }
        if streamPrologue == nil { streamPrologue = Self.prologue(reproducing: header) }
        events.append(.streamOpen(header))
        unitStart = end
        namespaceOverhead = 0
    }

    /// An opening tag with `header`'s name and namespace declarations (its
    /// attributes do not matter to what follows), or nil when the closing
    /// tag might not match it: `</s:stream>` must close `<s:stream>`, so
    /// the header's own name must be the only way to write it.
    private static func prologue(reproducing header: StreamHeader) -> [UInt8]? {
        let spellings = header.prefixes.values.filter { $0 == header.namespace }.count
            + ((header.defaultNamespace ?? "") == header.namespace ? 1 : 0)
        guard spellings == 1 else { return nil }
        var scope = header
        scope.attributes = []
        guard let prologue = try? XMLSerializer.streamOpening(scope) else { return nil }
        return prologue == clientPrologue ? clientPrologue : prologue
    }

    /// The prologue of nearly every client stream as `XMLSerializer` writes
    /// it, kept once for all of them rather than once per stream.
    private static let clientPrologue = Array(
        "<?xml version='1.0'?><stream:stream xmlns='\(NS.client)' xmlns:stream='\(NS.streams)'>".utf8)

    fileprivate func endElement() {
        let end = markEventEnd()
        guard !refuseOversizedToken("end tag") else { return }
        guard var element = stack.popLast() else {
            // The stream is over: what follows is not read, so that it
            // cannot matter how it arrived (Expat judges junk after the
            // root element differently when it comes a byte at a time).
            streamClosed = true
            events.append(.streamClose)
            XML_StopParser(parsing, XML_FALSE)
            return
        }
        appendText(to: &element)
        if stack.isEmpty {
            guard end - unitStart <= limits.maxStanzaSize else {
                return fail(.policyViolation, "stanza larger than \(limits.maxStanzaSize) bytes")
            }
            unitStart = end
            namespaceOverhead = 0
            events.append(.element(element))
        } else {
            stack[stack.count - 1].children.append(.element(element))
        }
    }

    fileprivate func characters(_ data: UnsafePointer<XML_Char>, _ length: Int) {
        let end = markEventEnd()
        // Text arrives in pieces of any size; a reference (`&#x41;`, which
        // may have any number of leading zeros) is one token, told apart
        // by being longer than what it stands for.
        if Int(XML_GetCurrentByteCount(parsing)) != length, refuseOversizedToken("reference") { return }
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        if stack.isEmpty {
            // Between stanzas only whitespace (keepalives) may appear.
            guard bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else {
                return fail(.badFormat, "text outside any stanza")
            }
            unitStart = end
        } else {
            text.append(contentsOf: bytes)
        }
    }

    fileprivate func declareNamespace(prefix: UnsafePointer<XML_Char>?, uri: UnsafePointer<XML_Char>?) {
        guard !streamOpened else {
            // Only the header's declarations are reported; inside a stanza
            // they offset the namespace growth (see `namespaceOverhead`).
            declaredOnThisTag += (uri.map { strlen($0) } ?? 0) + (prefix.map { strlen($0) } ?? 0) + 10
            return
        }
        pendingDeclarations.append((prefix.map { String(cString: $0) }, uri.map { String(cString: $0) } ?? ""))
    }

    fileprivate func xmlDeclaration(encoding: UnsafePointer<XML_Char>?) {
        _ = markEventEnd()
        guard !refuseOversizedToken("XML declaration"), let encoding else { return }
        let name = String(cString: encoding)
        if name.lowercased() != "utf-8" {
            fail(.unsupportedEncoding, "encoding '\(name)' declared; XMPP streams are UTF-8")
        }
    }

    // MARK: - Building

    private func flushText() {
        guard !stack.isEmpty, !text.isEmpty else { return }
        appendText(to: &stack[stack.count - 1])
    }

    private func appendText(to element: inout Element) {
        guard !text.isEmpty else { return }
        element.children.append(.text(String(decoding: text, as: UTF8.self)))
        text.removeAll(keepingCapacity: true)
    }

    /// Splits Expat's `uri SEPARATOR local` form; a name without the
    /// separator is in no namespace.
    private func splitName(_ qualified: UnsafePointer<XML_Char>) -> (namespace: String, name: String) {
        let length = strlen(qualified)
        let raw = UnsafeRawBufferPointer(start: qualified, count: length)
        guard let cut = raw.firstIndex(of: UInt8(Self.separator)) else {
            return ("", String(decoding: raw, as: UTF8.self))
        }
        let uri = UnsafeRawBufferPointer(rebasing: raw[..<cut])
        let local = UnsafeRawBufferPointer(rebasing: raw[(cut + 1)...])
        return (namespaces.string(for: uri), String(decoding: local, as: UTF8.self))
    }

    private func installHandlers(on expat: XML_Parser) {
        ExpatReparseDeferral.disable(for: expat)
        XML_SetUserData(expat, Unmanaged.passUnretained(self).toOpaque())
        XML_SetElementHandler(
            expat,
            { context, name, attributes in
                parser(context)?.startElement(name!, attributes!)
            },
            { context, _ in parser(context)?.endElement() })
        XML_SetCharacterDataHandler(expat) { context, data, length in
            parser(context)?.characters(data!, Int(length))
        }
        XML_SetStartNamespaceDeclHandler(expat) { context, prefix, uri in
            parser(context)?.declareNamespace(prefix: prefix, uri: uri)
        }
        XML_SetXmlDeclHandler(expat) { context, _, encoding, _ in
            parser(context)?.xmlDeclaration(encoding: encoding)
        }
        // RFC 6120 §11.1: none of these may appear in an XMPP stream.
        XML_SetCommentHandler(expat) { context, _ in
            parser(context)?.fail(.restrictedXML, "comment")
        }
        XML_SetProcessingInstructionHandler(expat) { context, _, _ in
            parser(context)?.fail(.restrictedXML, "processing instruction")
        }
        XML_SetStartDoctypeDeclHandler(expat) { context, _, _, _, _ in
            parser(context)?.fail(.restrictedXML, "document type declaration")
        }
        XML_SetEntityDeclHandler(expat) { context, _, _, _, _, _, _, _, _ in
            parser(context)?.fail(.restrictedXML, "entity declaration")
        }
        XML_SetParamEntityParsing(expat, XML_PARAM_ENTITY_PARSING_NEVER)
    }
}

/// The parser behind Expat's user-data pointer.
/// Expat may still deliver a callback or two after `XML_StopParser`; those
/// are dropped by returning `nil` once the parser has failed or the stream
/// has closed.
private func parser(_ context: UnsafeMutableRawPointer?) -> XMLStreamParser? {
    let parser = Unmanaged<XMLStreamParser>.fromOpaque(context!).takeUnretainedValue()
    return parser.failure == nil && !parser.streamClosed ? parser : nil
}

/// The namespace URIs one stream has used, so that the parser allocates a
/// `String` for `jabber:client` once per stream rather than once per element.
/// A stream uses a handful of namespaces; a peer inventing more than
/// `capacity` just stops being cached.
private struct NamespaceTable {
    private var entries: [(bytes: [UInt8], string: String)] = []
    private let capacity = 64

    mutating func string(for uri: UnsafeRawBufferPointer) -> String {
        guard !uri.isEmpty else { return "" }
        for entry in entries where entry.bytes.count == uri.count {
            if entry.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, uri.baseAddress!, uri.count) == 0 }) {
                return entry.string
            }
        }
        let string = String(decoding: uri, as: UTF8.self)
        if entries.count < capacity { entries.append((Array(uri), string)) }
        return string
    }
}
