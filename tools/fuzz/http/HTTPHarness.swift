import FuzzSupport
import XMPPServer

/// libFuzzer's entry point: checks one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkHTTPRequest(FuzzInput(data, count: size))
    return 0
}

#if !LIBFUZZER
    /// Without libFuzzer: replays the inputs named on the command line.
    @main enum Replay {
        static func main() { replay(CommandLine.arguments.dropFirst()) { checkHTTPRequest(FuzzInput($0)) } }
    }
#endif

/// Limits small enough that short inputs reach each of them.
let smallLimits = HTTPRequestParser.Limits(maxRequestLineLength: 64, maxFieldCount: 4, maxFieldBlockLength: 256)

/// What a parser made of a whole connection's bytes, with the body's start
/// counted from the first byte, so that differently fed runs compare.
enum ParseResult: Equatable {
    case needMore
    case complete(HTTPRequestHead, bodyStart: Int)
    case failed(HTTPStatus, String)
}

/// The upload server's HTTP/1.1 request head parser (`HTTPRequestParser`).
///
/// Input: one byte choosing the default or the small limits, cut offsets
/// (`FuzzInput.takeCutOffsets`), then the connection's bytes.
///
/// Checks:
/// - fed whole, in pieces or byte by byte, the parser gives the same result
///   and finds the body at the same offset;
/// - a complete head ends with an empty line, has a token method, a target
///   that is `*` or starts with `/`, and (HTTP/1.1) exactly one Host;
/// - written out again, the head parses to itself, ending where it ends.
func checkHTTPRequest(_ input: FuzzInput) {
    var input = input
    let limits = input.takeByte() & 1 == 0 ? HTTPRequestParser.Limits() : smallLimits
    let offsets = input.takeCutOffsets(maximum: 16)
    let bytes = input.takeRest()

    let whole = parse([bytes[...]], limits)
    let pieces = parse(bytes.pieces(cutAt: offsets), limits)
    invariant(pieces == whole, "fed whole: \(whole)\nfed in pieces: \(pieces)")
    let byteByByte = parse(bytes.indices.map { bytes[$0...$0] }, limits)
    invariant(byteByByte == whole, "fed whole: \(whole)\nfed byte by byte: \(byteByByte)")

    guard case .complete(let head, let bodyStart) = whole else { return }
    invariant(bytes[..<bodyStart].suffix(4).elementsEqual("\r\n\r\n".utf8), "head ends without an empty line")
    invariant(!head.method.isEmpty && head.method.utf8.allSatisfy(isTokenByte), "method \(head.method)")
    invariant(head.target == "*" || head.target.first == "/", "target \(head.target)")
    invariant(head.minorVersion == 0 || head.values(of: "Host").count == 1, "HTTP/1.1 without one Host")

    var written = "\(head.method) \(head.target) HTTP/1.\(head.minorVersion)\r\n"
    for field in head.fields { written += "\(field.name): \(field.value)\r\n" }
    written += "\r\n"
    let rewritten = parse([Array(written.utf8)[...]], limits)
    invariant(rewritten == .complete(head, bodyStart: written.utf8.count), "\(head) written out gives \(rewritten)")
}

/// Feeds `pieces` to a new parser until it decides.
func parse(_ pieces: [ArraySlice<UInt8>], _ limits: HTTPRequestParser.Limits) -> ParseResult {
    var parser = HTTPRequestParser(limits: limits)
    var consumed = 0
    for piece in pieces {
        switch piece.withUnsafeBytes({ parser.feed($0) }) {
        case .needMore: consumed += piece.count
        case .complete(let head, let bodyStart): return .complete(head, bodyStart: consumed + bodyStart)
        case .failed(let status, let reason): return .failed(status, reason)
        }
    }
    return .needMore
}
