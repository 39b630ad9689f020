import XMPPCore

/// How a client stream's XML travels.
enum StreamFraming: Sendable, Equatable {
    /// RFC 6120: the stream is one XML document, `<stream:stream>` to
    /// `</stream:stream>`, with elements in its namespace scope.
    case xmlStream
    /// RFC 7395: each element is a WebSocket message of its own, a whole
    /// XML document declaring its namespaces; `<open/>` and `<close/>`
    /// stand for the stream's start and end.
    case webSocket
}

/// RFC 7395 on the session. The parser reads a WebSocket stream as if it
/// were inside `<stream:stream>` (`primeParser` feeds it an opening tag of
/// our own), so every message is a top-level element with the client
/// stream's defaults; `<open/>` and `<close/>` are mapped to the stream's
/// header and end, and everything else is handled as on TCP. Output is
/// written in the empty scope, so each element declares its namespace.
extension ClientSession {
    /// The opening tag fed to the parser before each stream over a
    /// WebSocket (`jabber:client` by default, `stream:` bound).
    private static let framedStreamPrologue = Array(
        "<stream:stream xmlns='\(NS.client)' xmlns:stream='\(NS.streams)'>".utf8)

    /// Our `<close/>`, written as Strophe.js expects it to the byte (it
    /// compares the whole message with this text).
    static let framedClose = Array("<close xmlns=\"\(NS.framing)\" />".utf8)

    /// Over a WebSocket, readies the parser for a stream: the prologue's
    /// header event is dropped, as the client's `<open/>` is the real one.
    func primeParser() {
        guard framing == .webSocket else { return }
        _ = parser.feed(Self.framedStreamPrologue)
    }

    /// Why `message`, one WebSocket message, breaks RFC 7395 §3.3.3 (one
    /// whole element per message), given what the parser made of it; nil
    /// when it is fine. An empty or whitespace-only message (a keepalive
    /// some clients send; a pong) is fine and does nothing.
    static func framingViolation(_ events: [XMLStreamEvent], message: UnsafeRawBufferPointer) -> StreamError? {
        switch events.count {
        case 0:
            let isBlank = message.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            return isBlank ? nil : StreamError(.badFormat, text: "a WebSocket message must hold one whole element")
        case 1:
            return nil
        default:
            return StreamError(.badFormat, text: "a WebSocket message must hold one element, not several")
        }
    }

    /// `<open/>` begins the stream, as a stream header would (the same
    /// checks and answer); `<close/>` ends it.
    func receiveFraming(_ element: Element) {
        switch element.name {
        case "open" where !headerSent:
            receiveHeader(
                StreamHeader(
                    name: "stream", namespace: NS.streams, defaultNamespace: NS.client, prefixes: [:],
                    attributes: element.attributes))
        case "close":
            receiveStreamClose()
        default:
            fail(StreamError(.badFormat, text: "<\(element.name)/> is not expected here"))
        }
    }

    /// Our `<open/>` with the header's `attributes` (RFC 7395 §3.3.2).
    static func openElement(_ attributes: [Attribute]) throws(XMLSerializationError) -> [UInt8] {
        try XMLSerializer.bytes(Element("open", namespace: NS.framing, attributes: attributes))
    }

    /// Ends our side of the stream: `</stream:stream>`, or `<close/>`.
    func sendStreamClose() {
        send(framing == .webSocket ? Self.framedClose : XMLSerializer.streamClosing(Self.replyHeaderShape))
    }

    /// Shows a quiet client the stream is alive: a space between elements
    /// on TCP, a ping over a WebSocket (where no text may stand between
    /// elements).
    func sendKeepalive() {
        guard let webSocket = transport as? WebSocketTransport else { return send([0x20]) }
        lastSent = server.loop.now
        webSocket.sendPing()
    }
}
