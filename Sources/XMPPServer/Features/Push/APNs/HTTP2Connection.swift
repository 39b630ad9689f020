import Dispatch
import XMPPCore
import XMPPNet

/// A small, strict HTTP/2 client connection (RFC 9113) over TLS, for one
/// use: many small requests in turn to one server (Apple's push service),
/// over one connection kept open. Requests go out as one HEADERS frame and
/// one DATA frame; responses are read whole. No server push, no priority,
/// no request bodies larger than the flow-control window allows at once
/// (they wait for it).
///
/// Anything the peer does wrong ends the connection with GOAWAY and fails
/// every request on it; the owner opens a new one. Lives on one loop.
final class HTTP2Connection: ByteTransportDelegate {
    /// A complete response.
    struct Response: Sendable {
        var status: Int
        var headers: [HPACK.Header]
        var body: [UInt8]
    }

    /// Why a request got no response.
    struct Failure: Error, Sendable {
        var reason: String
        /// Whether the server surely did not process it (REFUSED_STREAM,
        /// or a stream above GOAWAY's last id), so it may be sent again.
        var unprocessed: Bool
    }

    typealias Completion = (Result<Response, Failure>) -> Void

    private struct Request {
        var headers: [HPACK.Header]
        var body: [UInt8]
        var completion: Completion
    }

    private struct Stream {
        var completion: Completion
        /// The body still to send (flow control may hold it back).
        var unsent: [UInt8]
        var sendWindow: Int
        var headerBlock: [UInt8] = []
        var status: Int?
        var headers: [HPACK.Header] = []
        var body: [UInt8] = []
    }

    private enum FrameType: UInt8 {
        case data = 0, headers = 1, priority = 2, resetStream = 3, settings = 4, pushPromise = 5, ping = 6
        case goAway = 7, windowUpdate = 8, continuation = 9
    }

    private enum Flag {
        static let endStream: UInt8 = 0x1
        static let ack: UInt8 = 0x1
        static let endHeaders: UInt8 = 0x4
        static let padded: UInt8 = 0x8
        static let priority: UInt8 = 0x20
    }

    private enum ErrorCode: UInt32 {
        case noError = 0, protocolError = 1, flowControl = 3, frameSize = 6, refusedStream = 7, compression = 9
    }

    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// The largest frame we accept (our SETTINGS_MAX_FRAME_SIZE: the default).
    static let maxFrameSize = 16_384
    /// The largest response body kept; APNs answers with a few bytes.
    static let maxBodySize = 64 << 10
    /// How many requests may wait for a stream before new ones are refused.
    static let maxWaiting = 1000

    private let loop: EventLoop
    private let authority: String
    private var connection: TCPConnection?
    private var tls: SecureChannel?
    private var input: [UInt8] = []
    private var inputHead = 0
    private var decoder = HPACK.Decoder()
    private var streams: [UInt32: Stream] = [:]
    private var waiting: [Request] = []
    private var nextStreamID: UInt32 = 1
    /// The stream whose header block CONTINUATION frames must carry on.
    private var continuing: UInt32?
    private var peerMaxStreams = 100
    private var peerInitialWindow = 65_535
    private var peerMaxFrameSize = 16_384
    private var connectionSendWindow = 65_535
    private var checkedProtocol = false
    private var goingAway = false
    private(set) var isClosed = false
    /// Called once, when the connection has closed.
    var onClose: (() -> Void)?

    /// Opens a connection to `host` (a name is resolved off the loop) and
    /// `port` with `tls`, which must offer ALPN `h2`; `authority` is the
    /// `:authority` of every request.
    init(host: String, port: UInt16, authority: String, tls context: TLSContext, on loop: EventLoop) {
        self.loop = loop
        self.authority = authority
        let bound = LoopBound(self, on: loop)
        DispatchQueue.global().async {
            let resolved = Result { () throws(IOError) in try SocketAddress.resolve(host: host, port: port) }
            bound.execute { connection in connection.connect(resolved, tls: context) }
        }
    }

    private func connect(_ resolved: Result<[SocketAddress], IOError>, tls context: TLSContext) {
        guard !isClosed else { return }
        guard case .success(let addresses) = resolved, let address = addresses.first else {
            return fail(Failure(reason: "cannot resolve the push service's host", unprocessed: true))
        }
        TCPConnection.connect(to: address, on: loop, timeout: .seconds(10)) { [self] result in
            switch result {
            case .success(let connection):
                guard !isClosed else { return connection.close() }
                connection.handler = self
                self.connection = connection
                tls = SecureChannel(TLSSession(context: context)) { [weak self] in self?.connection?.write($0) }
                // Our SETTINGS: no server push; the rest stays at the defaults.
                write(Self.preface + Self.frame(.settings, payload: [0, 2, 0, 0, 0, 0]))
                startWaiting()
            case .failure(let error):
                fail(Failure(reason: "cannot connect to \(address): \(error)", unprocessed: true))
            }
        }
    }

    /// Whether new requests may be sent on this connection.
    var isUsable: Bool { !isClosed && !goingAway }

    /// Sends a request; `completion` runs on the loop with its response or
    /// why there is none. Headers are the pseudo-headers `:method` and
    /// `:path` first, then the others; `:scheme` and `:authority` are added.
    func send(_ headers: [HPACK.Header], body: [UInt8], completion: @escaping Completion) {
        guard isUsable else {
            return completion(.failure(Failure(reason: "the connection is closing", unprocessed: true)))
        }
        guard waiting.count < Self.maxWaiting else {
            return completion(.failure(Failure(reason: "too many requests waiting", unprocessed: true)))
        }
        waiting.append(Request(headers: headers, body: body, completion: completion))
        startWaiting()
    }

    /// Ends the connection: GOAWAY, then close; what is outstanding fails.
    func close() {
        guard !isClosed else { return }
        write(Self.frame(.goAway, payload: Self.goAwayPayload(.noError)))
        fail(Failure(reason: "closed", unprocessed: false))
    }

    // MARK: - Sending

    /// Opens streams for waiting requests while the peer allows more.
    private func startWaiting() {
        guard connection != nil, !goingAway else { return }
        while !waiting.isEmpty, streams.count < peerMaxStreams {
            let request = waiting.removeFirst()
            let id = nextStreamID
            nextStreamID += 2
            var headers = request.headers
            headers.insert(contentsOf: [HPACK.Header(":scheme", "https"), HPACK.Header(":authority", authority)], at: 2)
            streams[id] = Stream(completion: request.completion, unsent: request.body, sendWindow: peerInitialWindow)
            let block = HPACK.encode(headers)
            var bytes: [UInt8] = []
            var offset = 0
            repeat {
                let end = min(block.count, offset + peerMaxFrameSize)
                let isLast = end == block.count
                bytes += Self.frame(
                    offset == 0 ? .headers : .continuation,
                    flags: (isLast ? Flag.endHeaders : 0) | (request.body.isEmpty && offset == 0 ? Flag.endStream : 0),
                    stream: id, payload: Array(block[offset..<end]))
                offset = end
            } while offset < block.count
            write(bytes)
            sendBody(of: id)
        }
    }

    /// Sends as much of a stream's body as the windows allow.
    private func sendBody(of id: UInt32) {
        guard var stream = streams[id], !stream.unsent.isEmpty else { return }
        var bytes: [UInt8] = []
        while !stream.unsent.isEmpty {
            let size = min(stream.unsent.count, stream.sendWindow, connectionSendWindow, peerMaxFrameSize)
            guard size > 0 else { break }
            let chunk = Array(stream.unsent.prefix(size))
            stream.unsent.removeFirst(size)
            stream.sendWindow -= size
            connectionSendWindow -= size
            bytes += Self.frame(.data, flags: stream.unsent.isEmpty ? Flag.endStream : 0, stream: id, payload: chunk)
        }
        streams[id] = stream
        if !bytes.isEmpty { write(bytes) }
    }

    private func write(_ bytes: [UInt8]) {
        guard let tls else { return }
        do {
            try tls.send(bytes)
        } catch {
            fail(Failure(reason: "TLS: \(error)", unprocessed: false))
        }
    }

    /// One frame: the 9-byte header (§4.1) and `payload`.
    private static func frame(_ type: FrameType, flags: UInt8 = 0, stream: UInt32 = 0, payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type.rawValue, flags]
            + bigEndian(stream & 0x7FFF_FFFF) + payload
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func goAwayPayload(_ code: ErrorCode, lastStream: UInt32 = 0) -> [UInt8] {
        bigEndian(lastStream) + bigEndian(code.rawValue)
    }

    // MARK: - Receiving

    func didRead(bytes: UnsafeRawBufferPointer) {
        guard let tls else { return }
        do {
            input += try tls.receive(bytes)
        } catch {
            return fail(Failure(reason: "TLS: \(error)", unprocessed: false))
        }
        if !checkedProtocol, tls.session.isHandshakeComplete {
            checkedProtocol = true
            guard tls.session.applicationProtocol == "h2" else {
                return fail(Failure(reason: "the server does not speak HTTP/2 (ALPN h2)", unprocessed: false))
            }
        }
        readFrames()
    }

    private func readFrames() {
        while !isClosed, input.count - inputHead >= 9 {
            let header = input[inputHead..<(inputHead + 9)]
            let length = Int(header[inputHead]) << 16 | Int(header[inputHead + 1]) << 8 | Int(header[inputHead + 2])
            guard length <= Self.maxFrameSize else {
                return protocolError(.frameSize, "a frame of \(length) bytes")
            }
            guard input.count - inputHead >= 9 + length else { break }
            let typeByte = header[inputHead + 3]
            let flags = header[inputHead + 4]
            let stream = UInt32(Self.integer(input, at: inputHead + 5)) & 0x7FFF_FFFF
            let payload = Array(input[(inputHead + 9)..<(inputHead + 9 + length)])
            inputHead += 9 + length
            handle(FrameType(rawValue: typeByte), flags: flags, stream: stream, payload: payload)
        }
        if inputHead == input.count {
            input.removeAll(keepingCapacity: true)
            inputHead = 0
        } else if inputHead > 1 << 16 {
            input.removeFirst(inputHead)
            inputHead = 0
        }
    }

    private static func integer(_ bytes: [UInt8], at offset: Int) -> Int {
        Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    private func handle(_ type: FrameType?, flags: UInt8, stream: UInt32, payload: [UInt8]) {
        if let expected = continuing, type != .continuation || stream != expected {
            return protocolError(.protocolError, "a header block was interrupted")
        }
        switch type {
        case .settings:
            guard stream == 0, payload.count % 6 == 0 else { return protocolError(.frameSize, "a bad SETTINGS frame") }
            guard flags & Flag.ack == 0 else { return }
            applySettings(payload)
            write(Self.frame(.settings, flags: Flag.ack, payload: []))
        case .ping:
            guard stream == 0, payload.count == 8 else { return protocolError(.frameSize, "a bad PING frame") }
            if flags & Flag.ack == 0 { write(Self.frame(.ping, flags: Flag.ack, payload: payload)) }
        case .goAway:
            guard stream == 0, payload.count >= 8 else { return protocolError(.frameSize, "a bad GOAWAY frame") }
            goAway(lastStream: UInt32(Self.integer(payload, at: 0)) & 0x7FFF_FFFF)
        case .windowUpdate:
            guard payload.count == 4 else { return protocolError(.frameSize, "a bad WINDOW_UPDATE frame") }
            let increment = Self.integer(payload, at: 0) & 0x7FFF_FFFF
            guard increment > 0 else { return protocolError(.protocolError, "a WINDOW_UPDATE of 0") }
            if stream == 0 {
                connectionSendWindow += increment
                for id in streams.keys.sorted() { sendBody(of: id) }
            } else if streams[stream] != nil {
                streams[stream]!.sendWindow += increment
                sendBody(of: stream)
            }
            if connectionSendWindow > Int(Int32.max) { protocolError(.flowControl, "the window overflowed") }
        case .headers, .continuation:
            receiveHeaders(type!, flags: flags, stream: stream, payload: payload)
        case .data:
            receiveData(flags: flags, stream: stream, payload: payload)
        case .resetStream:
            guard payload.count == 4 else { return protocolError(.frameSize, "a bad RST_STREAM frame") }
            let code = UInt32(Self.integer(payload, at: 0))
            finish(stream, .failure(Failure(reason: "stream reset (\(code))", unprocessed: code == ErrorCode.refusedStream.rawValue)))
        case .pushPromise:
            protocolError(.protocolError, "PUSH_PROMISE after SETTINGS_ENABLE_PUSH = 0")
        case .priority, nil:
            break  // §5.5: unknown frame types are ignored
        }
    }

    private func applySettings(_ payload: [UInt8]) {
        for offset in stride(from: 0, to: payload.count, by: 6) {
            let identifier = Int(payload[offset]) << 8 | Int(payload[offset + 1])
            let value = Self.integer(payload, at: offset + 2)
            switch identifier {
            case 3: peerMaxStreams = min(value, 1000)
            case 4:
                guard value <= Int(Int32.max) else { return protocolError(.flowControl, "an initial window too large") }
                let delta = value - peerInitialWindow
                peerInitialWindow = value
                for id in streams.keys { streams[id]!.sendWindow += delta }
            case 5:
                guard (16_384...16_777_215).contains(value) else { return protocolError(.protocolError, "a bad frame size") }
                peerMaxFrameSize = value
            default: break
            }
        }
        startWaiting()
    }

    private func receiveHeaders(_ type: FrameType, flags: UInt8, stream id: UInt32, payload: [UInt8]) {
        guard id != 0 else { return protocolError(.protocolError, "HEADERS on stream 0") }
        var fragment = payload[...]
        if type == .headers {
            if flags & Flag.padded != 0 {
                guard let padding = fragment.first.map(Int.init), padding < fragment.count else {
                    return protocolError(.protocolError, "bad padding")
                }
                fragment = fragment.dropFirst().dropLast(padding)
            }
            if flags & Flag.priority != 0 {
                guard fragment.count >= 5 else { return protocolError(.protocolError, "a short HEADERS frame") }
                fragment = fragment.dropFirst(5)
            }
        }
        guard streams[id] != nil else {
            // A stream we reset or never opened: the block still feeds the
            // decoder's table, so decode and drop it.
            return decodeBlock(Array(fragment), flags: flags, stream: id)
        }
        streams[id]!.headerBlock += fragment
        guard streams[id]!.headerBlock.count <= Self.maxBodySize else {
            return protocolError(.protocolError, "a header block too large")
        }
        decodeBlock(streams[id]!.headerBlock, flags: flags, stream: id)
    }

    /// Decodes a header block once its last frame is in.
    private func decodeBlock(_ block: [UInt8], flags: UInt8, stream id: UInt32) {
        guard flags & Flag.endHeaders != 0 else {
            continuing = id
            return
        }
        continuing = nil
        let headers: [HPACK.Header]
        do {
            headers = try decoder.decode(streams[id]?.headerBlock ?? block)
        } catch {
            return protocolError(.compression, "\(error)")
        }
        guard var stream = streams[id] else { return }
        stream.headerBlock = []
        if stream.status == nil {
            guard let status = headers.first(where: { $0.name == ":status" }).flatMap({ Int($0.value) }) else {
                return protocolError(.protocolError, "a response without :status")
            }
            // 1xx: informational, the real response follows.
            if status >= 200 {
                stream.status = status
                stream.headers = headers
            }
        }
        streams[id] = stream
        if flags & Flag.endStream != 0 { complete(id) }
    }

    private func receiveData(flags: UInt8, stream id: UInt32, payload: [UInt8]) {
        guard id != 0 else { return protocolError(.protocolError, "DATA on stream 0") }
        var data = payload[...]
        if flags & Flag.padded != 0 {
            guard let padding = data.first.map(Int.init), padding < data.count else {
                return protocolError(.protocolError, "bad padding")
            }
            data = data.dropFirst().dropLast(padding)
        }
        // Give back what was received, so the window never runs dry.
        if !payload.isEmpty {
            var update = Self.frame(.windowUpdate, payload: Self.bigEndian(UInt32(payload.count)))
            if flags & Flag.endStream == 0, streams[id] != nil {
                update += Self.frame(.windowUpdate, stream: id, payload: Self.bigEndian(UInt32(payload.count)))
            }
            write(update)
        }
        guard streams[id] != nil else { return }
        guard streams[id]!.status != nil else { return protocolError(.protocolError, "DATA before the response headers") }
        streams[id]!.body += data
        guard streams[id]!.body.count <= Self.maxBodySize else {
            return finish(id, .failure(Failure(reason: "the response body is too large", unprocessed: false)))
        }
        if flags & Flag.endStream != 0 { complete(id) }
    }

    private func complete(_ id: UInt32) {
        guard let stream = streams[id], let status = stream.status else {
            return finish(id, .failure(Failure(reason: "the stream ended without a response", unprocessed: false)))
        }
        finish(id, .success(Response(status: status, headers: stream.headers, body: stream.body)))
    }

    private func finish(_ id: UInt32, _ result: Result<Response, Failure>) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        stream.completion(result)
        if goingAway, streams.isEmpty { close() }
        startWaiting()
    }

    private func goAway(lastStream: UInt32) {
        goingAway = true
        for id in streams.keys.sorted() where id > lastStream {
            finish(id, .failure(Failure(reason: "the server is going away", unprocessed: true)))
        }
        let refused = waiting
        waiting = []
        for request in refused {
            request.completion(.failure(Failure(reason: "the server is going away", unprocessed: true)))
        }
        if streams.isEmpty { close() }
    }

    private func protocolError(_ code: ErrorCode, _ reason: String) {
        guard !isClosed else { return }
        write(Self.frame(.goAway, payload: Self.goAwayPayload(code, lastStream: 0)))
        fail(Failure(reason: "HTTP/2 protocol error: \(reason)", unprocessed: false))
    }

    /// Fails everything outstanding and closes.
    private func fail(_ failure: Failure) {
        guard !isClosed else { return }
        isClosed = true
        let open = streams.sorted { $0.key < $1.key }.map(\.value.completion)
        let queued = waiting.map(\.completion)
        streams = [:]
        waiting = []
        tls?.close()
        connection?.close()
        for completion in open { completion(.failure(failure)) }
        for completion in queued { completion(.failure(Failure(reason: failure.reason, unprocessed: true))) }
        onClose?()
        onClose = nil
    }

    func didClose(error: IOError?) {
        connection = nil
        fail(Failure(reason: error.map { "connection lost: \($0)" } ?? "the server closed the connection", unprocessed: false))
    }
}
