import FuzzSupport
import XMPPServer

/// libFuzzer's entry point: checks one input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    checkWebSocketFrames(FuzzInput(data, count: size))
    return 0
}

#if !LIBFUZZER
    /// Without libFuzzer: replays the inputs named on the command line.
    @main enum Replay {
        static func main() { replay(CommandLine.arguments.dropFirst()) { checkWebSocketFrames(FuzzInput($0)) } }
    }
#endif

/// The server's WebSocket frame decoder (`WebSocketFrameDecoder`).
///
/// Input: two bytes of message limit (so short inputs reach it), cut
/// offsets (`FuzzInput.takeCutOffsets`), then the client's bytes.
///
/// Checks:
/// - fed whole, in pieces or byte by byte, the decoder gives the same
///   inputs and the same violation;
/// - no message is longer than the limit, every message is UTF-8, and no
///   control payload is longer than 125 bytes;
/// - the bytes decoded without a violation hold at least a 6-byte masked
///   frame header per input.
func checkWebSocketFrames(_ input: FuzzInput) {
    var input = input
    let limit = input.takeUInt16()
    let offsets = input.takeCutOffsets(maximum: 16)
    let bytes = input.takeRest()

    let whole = decode([bytes[...]], limit)
    let pieces = decode(bytes.pieces(cutAt: offsets), limit)
    invariant(pieces == whole, "fed whole: \(whole)\nfed in pieces: \(pieces)")
    let byteByByte = decode(bytes.indices.map { bytes[$0...$0] }, limit)
    invariant(byteByByte == whole, "fed whole: \(whole)\nfed byte by byte: \(byteByByte)")

    for decoded in whole.inputs {
        switch decoded {
        case .message(let message):
            invariant(message.count <= limit, "a message of \(message.count) bytes over the limit \(limit)")
            invariant(String(validating: message, as: UTF8.self) != nil, "a message that is not UTF-8")
        case .ping(let payload):
            invariant(payload.count <= 125, "a ping of \(payload.count) bytes")
        case .pong, .close:
            break
        }
    }
    if whole.violation == nil {
        invariant(whole.inputs.count * 6 <= bytes.count, "\(whole.inputs.count) inputs from \(bytes.count) bytes")
    }
}

/// Feeds `pieces` in turn; everything decoded, with the violation if any.
func decode(_ pieces: [ArraySlice<UInt8>], _ limit: Int) -> WebSocketFrames {
    var decoder = WebSocketFrameDecoder(maxMessageSize: limit)
    var decoded = WebSocketFrames()
    for piece in pieces {
        let frames = piece.withUnsafeBytes { decoder.feed($0) }
        decoded.inputs += frames.inputs
        decoded.violation = decoded.violation ?? frames.violation
    }
    return decoded
}
