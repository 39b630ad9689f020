/// The status codes of a WebSocket close frame the server sends (RFC 6455
/// §7.4.1).
package enum WebSocketCloseCode: UInt16, Sendable {
    /// The stream ended normally.
    case normal = 1000
    /// The server is shutting down.
    case goingAway = 1001
    /// A frame broke RFC 6455: unmasked, reserved bits or opcodes, a
    /// fragmented or long control frame, a continuation out of place.
    case protocolError = 1002
    /// A binary message: XMPP over WebSocket is text only (RFC 7395 §3.2).
    case unsupportedData = 1003
    /// A text message that is not UTF-8.
    case invalidPayload = 1007
    /// A message larger than the stream's largest stanza.
    case messageTooBig = 1009
}

/// A frame the peer broke the protocol with: the connection is closed with
/// `code`.
package struct WebSocketViolation: Error, Sendable, Equatable {
    package let code: WebSocketCloseCode
    package let reason: String

    init(_ code: WebSocketCloseCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// What a client's frames come to.
package enum WebSocketInput: Sendable, Equatable {
    /// A whole text message, its fragments joined.
    case message([UInt8])
    /// A ping; the pong carries `payload` back.
    case ping([UInt8])
    /// A pong (to our ping, or unsolicited as a heartbeat).
    case pong
    /// The client closes, with its status code if it gave one.
    case close(UInt16?)
}

/// What one `feed` decoded: the inputs completed, in order, and the
/// violation that stopped decoding after them, if one did.
package struct WebSocketFrames: Sendable, Equatable {
    package var inputs: [WebSocketInput] = []
    package var violation: WebSocketViolation?

    package init() {}
}

/// Reads a client's WebSocket frames (RFC 6455 §5), strictly: every frame
/// masked (§5.1), no reserved bits (no extension is negotiated), text
/// messages only, control frames short and whole, continuations only
/// inside a fragmented message, lengths in their shortest encoding, and no
/// message longer than `maxMessageSize` (checked from the frame header,
/// before the payload is buffered). Nothing after a close frame is read
/// (§5.5.1: it is the last frame).
///
/// Memory: at most one frame header, one message and one read's worth of
/// following bytes are held.
package struct WebSocketFrameDecoder {
    /// The largest message, fragments joined; raised after login, as the
    /// stream's stanza limit is.
    package var maxMessageSize: Int
    /// Received bytes not decoded yet, from `start`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// The fragments of a message whose last frame has not come.
    private var fragments: [UInt8]?
    /// Set by a close frame or a violation: nothing more is decoded.
    private var isDone = false

    package init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// Decodes what `bytes` completes, up to the first frame that breaks
    /// the rules (then `violation` is set, and later feeds decode nothing)
    /// or a close frame.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) -> WebSocketFrames {
        var frames = WebSocketFrames()
        guard !isDone else { return frames }
        buffer.append(contentsOf: bytes)
        do {
            while !isDone, let input = try nextFrame() {
                guard let input else { continue }
                frames.inputs.append(input)
                if case .close = input { isDone = true }
            }
        } catch {
            frames.violation = error
            isDone = true
        }
        if isDone {
            buffer = []
            start = 0
        } else if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 << 10)
            start = 0
        } else if start > 0 {
            buffer.removeSubrange(..<start)
            start = 0
        }
        return frames
    }

    /// Decodes one frame if it is complete: `.some(input)` for a finished
    /// message or a control frame, `.some(nil)` for a fragment, nil when
    /// more bytes are needed.
    private mutating func nextFrame() throws(WebSocketViolation) -> WebSocketInput?? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        let isFinal = first & 0x80 != 0
        guard first & 0x70 == 0 else { throw WebSocketViolation(.protocolError, "reserved bits set") }
        guard second & 0x80 != 0 else { throw WebSocketViolation(.protocolError, "client frames must be masked") }
        let opcode = first & 0x0F
        var headerLength = 2
        var length = Int(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
            guard length >= 126 else { throw WebSocketViolation(.protocolError, "length not in its shortest form") }
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            guard buffer[start + 2] & 0x80 == 0 else { throw WebSocketViolation(.protocolError, "length out of range") }
            var long: UInt64 = 0
            for index in 2..<10 { long = long << 8 | UInt64(buffer[start + index]) }
            guard long > 0xFFFF else { throw WebSocketViolation(.protocolError, "length not in its shortest form") }
            guard long <= UInt64(maxMessageSize) else {
                throw WebSocketViolation(.messageTooBig, "a message of more than \(maxMessageSize) bytes")
            }
            length = Int(long)
            headerLength = 10
        }
        let isControl = opcode & 0x08 != 0
        if isControl {
            guard isFinal, length <= 125 else {
                throw WebSocketViolation(.protocolError, "control frames are whole and at most 125 bytes")
            }
        } else if (fragments?.count ?? 0) + length > maxMessageSize {
            throw WebSocketViolation(.messageTooBig, "a message of more than \(maxMessageSize) bytes")
        }
        guard available >= headerLength + 4 + length else { return nil }
        let maskStart = start + headerLength
        let payloadStart = maskStart + 4
        var payload = [UInt8](repeating: 0, count: length)
        for index in 0..<length {
            payload[index] = buffer[payloadStart + index] ^ buffer[maskStart + (index & 3)]
        }
        start = payloadStart + length
        return try decoded(opcode: opcode, isFinal: isFinal, payload: payload)
    }

    private mutating func decoded(opcode: UInt8, isFinal: Bool, payload: [UInt8]) throws(WebSocketViolation)
        -> WebSocketInput?
    {
        switch opcode {
        case 0x0:  // continuation
            guard fragments != nil else { throw WebSocketViolation(.protocolError, "a continuation without a message") }
            fragments! += payload
            guard isFinal else { return nil }
            let message = fragments!
            fragments = nil
            return try text(message)
        case 0x1:
            guard fragments == nil else {
                throw WebSocketViolation(.protocolError, "a new message before the last one ended")
            }
            guard isFinal else {
                fragments = payload
                return nil
            }
            return try text(payload)
        case 0x2:
            throw WebSocketViolation(.unsupportedData, "XMPP over WebSocket is text only")
        case 0x8:
            guard payload.count != 1 else { throw WebSocketViolation(.protocolError, "a close frame of one byte") }
            guard payload.count >= 2 else { return .close(nil) }
            let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
            guard Self.isValidCloseCode(code) else { throw WebSocketViolation(.protocolError, "close code \(code)") }
            _ = try text(Array(payload[2...]))
            return .close(code)
        case 0x9:
            return .ping(payload)
        case 0xA:
            return .pong
        default:
            throw WebSocketViolation(.protocolError, "opcode \(opcode)")
        }
    }

    /// `payload` as a message, once it is known to be UTF-8.
    private func text(_ payload: [UInt8]) throws(WebSocketViolation) -> WebSocketInput {
        guard String(validating: payload, as: UTF8.self) != nil else {
            throw WebSocketViolation(.invalidPayload, "a text message that is not UTF-8")
        }
        return .message(payload)
    }

    /// The codes a peer may send (RFC 6455 §7.4): the defined ones other
    /// than those reserved for reporting, and the registered and private
    /// ranges.
    static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }
}

/// Writes the server's frames: unmasked (RFC 6455 §5.1), whole.
enum WebSocketFrameEncoder {
    /// A text frame holding `payload`.
    static func text(_ payload: UnsafeRawBufferPointer) -> [UInt8] {
        frame(opcode: 0x1, payload)
    }

    /// A ping with no payload.
    static let ping = frame(opcode: 0x9, UnsafeRawBufferPointer(start: nil, count: 0))

    /// A pong carrying a ping's `payload` back.
    static func pong(_ payload: [UInt8]) -> [UInt8] {
        payload.withUnsafeBytes { frame(opcode: 0xA, $0) }
    }

    /// A close frame with `code`.
    static func close(_ code: WebSocketCloseCode) -> [UInt8] {
        [0x88, 2, UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
    }

    private static func frame(opcode: UInt8, _ payload: UnsafeRawBufferPointer) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        frame.reserveCapacity(payload.count + 10)
        switch payload.count {
        case ..<126:
            frame.append(UInt8(payload.count))
        case ...0xFFFF:
            frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            frame.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        }
        frame.append(contentsOf: payload)
        return frame
    }
}
