import FuzzSupport
import XMPPCore

/// libFuzzer's entry point: checks one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkXMLStream(FuzzInput(data, count: size))
    return 0
}

#if !LIBFUZZER
    /// Without libFuzzer: replays the inputs named on the command line.
    @main enum Replay {
        static func main() { replay(CommandLine.arguments.dropFirst()) { checkXMLStream(FuzzInput($0)) } }
    }
#endif

/// Limits small enough that inputs of a few hundred bytes reach every one
/// of them, so the fuzzer explores the refusal paths cheaply.
let smallLimits = XMLStreamParser.Limits(maxStanzaSize: 1024, maxDepth: 6, maxAttributes: 4, maxTokenSize: 256)

/// The XML stream parser (`XMLStreamParser`) on one client stream.
///
/// Input: one byte choosing the default or the small limits, cut offsets
/// (`FuzzInput.takeCutOffsets`), then the stream's bytes.
///
/// Checks:
/// - fed whole or in pieces, the parser reports the same events, and
///   fails or not alike (see `sameOutcome`);
/// - the events read as a stream: one header, first; an error, last;
/// - after `reset()` the same bytes give exactly the same events again;
/// - every element serializes in the header's namespace scope and parses
///   back equal (what a server relays is what it received).
func checkXMLStream(_ input: FuzzInput) {
    var input = input
    let limits = input.takeByte() & 1 == 0 ? XMLStreamParser.Limits() : smallLimits
    let offsets = input.takeCutOffsets(maximum: 16)
    let stream = input.takeRest()

    let parser = XMLStreamParser(limits: limits)
    let whole = parser.feed(stream)
    checkOrder(whole)

    parser.reset()
    var split: [XMLStreamEvent] = []
    for piece in stream.pieces(cutAt: offsets) {
        split += piece.withUnsafeBytes { parser.feed($0) }
    }
    checkOrder(split)
    invariant(sameOutcome(whole, split), "fed whole: \(whole)\nfed in pieces: \(split)")

    parser.reset()
    let again = parser.feed(stream)
    invariant(again == whole, "after reset: \(again)\nbefore: \(whole)")

    guard case .streamOpen(let header)? = whole.first else { return }
    for case .element(let element) in whole {
        checkRoundTrip(element, header: header, limits: limits)
    }
}

/// The errors the parser itself finds in what Expat has reported (or, for
/// limits, in what has been fed so far), as opposed to Expat's own.
let parserCheckedKinds: Set<XMLStreamError.Kind> = [.policyViolation, .badFormat, .restrictedXML]

/// Whether two event lists from the same bytes fed differently agree: the
/// same events before any error, and an error in both or neither.
///
/// The kind of error may differ when one is found by the parser's own
/// checks: Expat reports text only once it has seen where the text ends,
/// and limits are checked between feeds, so such a check can come before
/// or after a syntax error further on in the same piece, depending on
/// where the piece ends (text outside a stanza, then a stray `]]>`).
func sameOutcome(_ lhs: [XMLStreamEvent], _ rhs: [XMLStreamEvent]) -> Bool {
    switch (lhs.last, rhs.last) {
    case (.error(let left)?, .error(let right)?):
        guard lhs.dropLast() == rhs.dropLast() else { return false }
        return left.kind == right.kind || parserCheckedKinds.contains(left.kind)
            || parserCheckedKinds.contains(right.kind)
    case (.error?, _), (_, .error?):
        return false
    default:
        return lhs == rhs
    }
}

/// Checks that events come in stream order: the header first and once,
/// elements until the stream closes, an error only at the end.
func checkOrder(_ events: [XMLStreamEvent]) {
    for (index, event) in events.enumerated() {
        switch event {
        case .streamOpen:
            invariant(index == 0, "stream header at position \(index): \(events)")
        case .element, .streamClose:
            invariant(index > 0, "\(event) before the stream header")
            invariant(events[index - 1] != .streamClose, "\(event) after the stream closed")
        case .error:
            invariant(index == events.count - 1, "events after an error: \(events)")
        }
    }
}

/// Serializes `element` inside a stream opened by `header` and parses it
/// back; it must come back equal.
func checkRoundTrip(_ element: Element, header: StreamHeader, limits: XMLStreamParser.Limits) {
    // A header the serializer cannot write is the peer's business: a
    // server never echoes a received header.
    guard let opening = try? XMLSerializer.streamOpening(header) else { return }
    let bytes: [UInt8]
    do {
        bytes = try XMLSerializer.bytes(element, in: XMLNamespaceScope(header))
    } catch {
        return invariant(false, "\(error) serializing a parsed element: \(element)")
    }
    // Escaping and namespace declarations make the text longer, never
    // deeper or richer in attributes. The parser also counts, against the
    // stanza size, the declarations writing the stanza out again costs,
    // which this text already holds: hence twice its length.
    let unbounded = opening.count + bytes.count
    let parser = XMLStreamParser(
        limits: .init(
            maxStanzaSize: 2 * unbounded, maxDepth: limits.maxDepth, maxAttributes: limits.maxAttributes,
            maxTokenSize: unbounded))
    let events = parser.feed(opening) + parser.feed(bytes)
    invariant(
        events.count == 2 && events[1] == .element(element),
        "\(element)\nserialized as \(String(decoding: bytes, as: UTF8.self))\nparses back as \(events)")
}
