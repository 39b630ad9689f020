import XMPPCore
import XMPPNet

/// Where a request body goes (an upload's file), fed on the loop.
protocol HTTPBodySink: AnyObject {
    /// Takes the next bytes of the body.
    /// - Throws: Anything (a full disk); the request gets 500.
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// The whole body has arrived; `completion` (on the loop, now or later)
    /// gets the response.
    func finish(_ completion: @escaping (HTTPResponse) -> Void)
    /// The body will not be complete (the client went away or was too
    /// slow): undo what `write` did.
    func abort()
}

/// Answers the requests of a connection, one per connection.
protocol HTTPResponder: AnyObject {
    /// Answers `request` through `connection` (`respond`, `receiveBody` or
    /// `sendFile`), now or after a storage round trip. Framing is checked
    /// already: `request.contentLength` is valid, no transfer coding.
    func respond(to request: HTTPRequestHead, on connection: HTTPConnection)
}

extension HTTPRequestHead {
    /// The body's length: the one `Content-Length` value; nil when the field
    /// is absent, repeated or not a whole number (RFC 9112 §6.3).
    var contentLength: Int? {
        self[field: "content-length"].flatMap(wholeNumber)
    }
}

/// One HTTP/1.1 connection to the built-in server: reads one request head
/// (`HTTPRequestParser`), checks its framing, hands it to the responder,
/// then streams the request body to the responder's sink or a file to the
/// client, and closes. One request per connection (`Connection: close`):
/// uploads are a request each, so keep-alive would save a handshake per
/// file at the cost of request-boundary bookkeeping.
///
/// Memory stays bounded whatever the sizes: a body goes to its sink as it
/// arrives (one read buffer at a time, the loop's), and a file is read in
/// 64 KiB chunks only while less than `sendWindow` bytes wait for the
/// socket, resuming on `transportDidDrain()`.
///
/// A client gets `408` when its request head takes longer than `timeout`,
/// or its body stalls for `timeout`; a download whose client stops reading
/// for `timeout` is cut off.
///
/// Confined to the loop; TLS (HTTPS) through the same `SecureChannel` the
/// XMPP sessions use.
final class HTTPConnection {
    private enum State {
        case readingHead(HTTPRequestParser)
        /// The responder has the request; input is paused.
        case responding
        case receivingBody(any HTTPBodySink, remaining: Int)
        case sendingFile(FileSource)
        /// An error was answered before the body was read: reading the rest
        /// (`unreadBody`, up to `discardLimit`) before closing lets the
        /// client see the answer instead of a reset.
        case discarding
        case closed
    }

    /// A file being sent, and its descriptor, owned.
    private final class FileSource {
        let descriptor: Int32
        var remaining: Int
        init(descriptor: Int32, remaining: Int) {
            self.descriptor = descriptor
            self.remaining = remaining
        }
        deinit { UploadFiles.closeDescriptor(descriptor) }
    }

    /// Bytes of output allowed to wait for the socket before a download
    /// pauses reading its file.
    static let sendWindow = 256 << 10
    /// The most body bytes read and dropped after an early error answer.
    static let discardLimit = 1 << 20

    private weak var transport: (any ByteTransport)?
    /// The client's address, for a protocol the connection is upgraded to.
    let peer: SocketAddress
    private let loop: any Loop
    private let responder: any HTTPResponder
    /// HTTPS's TLS, writing its records to the transport.
    private var tls: SecureChannel?
    private let timeout: Duration
    private let log: Logger
    private var state: State
    /// Whether the connection is HTTPS.
    var isSecure: Bool { tls != nil }
    /// The request being answered, once its head is read.
    private(set) var request: HTTPRequestHead?
    /// Body bytes the client announced that have not been read yet.
    private var unreadBody = 0
    /// When the head began (for its deadline), then when the body or the
    /// download last made progress.
    private var lastProgress: ContinuousClock.Instant
    private var timer: (any ScheduledWork)?
    private var fileBuffer: [UInt8] = []

    /// Creates the connection's HTTP side; with `tls`, the connection is
    /// HTTPS from its first byte.
    init(
        transport: any ByteTransport, peer: SocketAddress, loop: any Loop, responder: any HTTPResponder,
        tls: TLSSession?, timeout: Duration, limits: HTTPRequestParser.Limits = .init(), log: Logger
    ) {
        self.transport = transport
        self.peer = peer
        self.loop = loop
        self.responder = responder
        self.timeout = timeout
        self.log = log
        self.state = .readingHead(HTTPRequestParser(limits: limits))
        self.lastProgress = loop.now
        self.tls = tls.map { SecureChannel($0) { [unowned self] in self.transport?.write($0) } }
        scheduleTimeoutCheck(after: timeout)
    }

    // MARK: - Input

    /// Handles bytes from the transport.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        loop.assertInLoop()
        guard let tls else { return process(bytes) }
        do {
            let plaintext = try tls.receive(bytes)
            if !plaintext.isEmpty { plaintext.withUnsafeBytes { process($0) } }
            if tls.receivedCloseNotify, case .readingHead = state { close() }
        } catch {
            log.info("TLS failed: \(error)")
            close()
        }
    }

    /// The transport closed (the peer went away, or after our close).
    func transportClosed() {
        loop.assertInLoop()
        if case .receivingBody(let sink, _) = state {
            log.info("the client went away during the upload")
            sink.abort()
        }
        finish()
    }

    /// The transport sent everything queued: a download continues.
    func transportDidDrain() {
        guard case .sendingFile(let source) = state else { return }
        lastProgress = loop.now
        pump(source)
    }

    private func process(_ bytes: UnsafeRawBufferPointer) {
        switch state {
        case .readingHead(var parser):
            let outcome = parser.feed(bytes)
            state = .readingHead(parser)
            switch outcome {
            case .needMore:
                return
            case .failed(let status, let reason):
                log.info("bad request: \(reason)")
                state = .responding
                respond(.text(status, reason))
            case .complete(let head, let bodyStart):
                request = head
                lastProgress = loop.now
                dispatch(head)
                if bodyStart < bytes.count { process(UnsafeRawBufferPointer(rebasing: bytes[bodyStart...])) }
            }
        case .receivingBody(let sink, let remaining):
            lastProgress = loop.now
            let take = min(remaining, bytes.count)
            unreadBody -= take
            do {
                try sink.write(UnsafeRawBufferPointer(rebasing: bytes[..<take]))
            } catch {
                log.error("cannot store the upload: \(error)")
                sink.abort()
                state = .responding
                return respond(.text(.internalServerError, "the file could not be stored"))
            }
            guard take == remaining else {
                state = .receivingBody(sink, remaining: remaining - take)
                return
            }
            state = .responding
            transport?.pauseReading()
            sink.finish { [weak self] response in self?.respond(response) }
        case .discarding:
            unreadBody -= min(unreadBody, bytes.count)
            if unreadBody == 0 { close() }
        case .responding, .sendingFile, .closed:
            return  // one request per connection: what follows it is dropped
        }
    }

    /// Checks framing (RFC 9112 §6), then passes the request on.
    private func dispatch(_ head: HTTPRequestHead) {
        state = .responding
        transport?.pauseReading()
        unreadBody = head.contentLength ?? 0
        if !head.values(of: "transfer-encoding").isEmpty {
            return respond(.text(.notImplemented, "Transfer-Encoding is not supported; send Content-Length"))
        }
        let lengths = head.values(of: "content-length")
        if !lengths.isEmpty, head.contentLength == nil {
            return respond(.text(.badRequest, "Content-Length must be one decimal number"))
        }
        if let expectation = head[field: "expect"], expectation.lowercased() != "100-continue" {
            return respond(.text(.expectationFailed, "only 'Expect: 100-continue' is understood"))
        }
        responder.respond(to: head, on: self)
    }

    // MARK: - Answers (for the responder)

    /// Sends `response` and closes. An unread request body is read and
    /// dropped first, up to `discardLimit`, unless the client waits for
    /// `100 Continue`.
    func respond(_ response: HTTPResponse) {
        loop.assertInLoop()
        guard isAnswering else { return }
        send(response.head(date: WallClock.now()))
        if request?.method != "HEAD" { send(response.body) }
        if unreadBody > 0, unreadBody <= Self.discardLimit, request.map(Self.expectsContinue) != true {
            state = .discarding
            lastProgress = loop.now
            transport?.resumeReading()
        } else {
            close()
        }
    }

    /// Reads the request's body (`contentLength` bytes) into `sink`, which
    /// answers when it is complete. Sends `100 Continue` first if the client
    /// waits for it.
    func receiveBody(into sink: any HTTPBodySink) {
        loop.assertInLoop()
        guard isAnswering, let request, let length = request.contentLength else { return }
        if Self.expectsContinue(request) { send(HTTPResponse(.continue).head(date: WallClock.now())) }
        if length == 0 {
            sink.finish { [weak self] response in self?.respond(response) }
            return
        }
        state = .receivingBody(sink, remaining: length)
        lastProgress = loop.now
        transport?.resumeReading()
    }

    /// Sends `response`'s head, then `length` bytes of the open file
    /// `descriptor` (which the connection now owns and closes), then closes.
    /// A HEAD request gets the head only.
    func sendFile(_ response: HTTPResponse, descriptor: Int32, length: Int) {
        loop.assertInLoop()
        let source = FileSource(descriptor: descriptor, remaining: length)
        guard isAnswering else { return }
        send(response.head(date: WallClock.now()))
        guard request?.method != "HEAD", length > 0 else { return close() }
        state = .sendingFile(source)
        lastProgress = loop.now
        pump(source)
    }

    /// Answers `101 Switching Protocols` with `fields` and hands the
    /// connection over: `makeHandler` gets the transport and HTTPS's TLS
    /// session and returns the transport's new delegate; this HTTP
    /// connection is then done, and reading resumes for the new protocol.
    /// (A client waits for the `101` before it sends more, RFC 6455 §4.1.)
    func upgrade(
        fields: [(name: String, value: String)],
        to makeHandler: (_ transport: any ByteTransport, _ tls: TLSSession?) -> any ByteTransportDelegate
    ) {
        loop.assertInLoop()
        guard isAnswering, let transport else { return }
        send(HTTPResponse(.switchingProtocols, fields: fields).head(date: WallClock.now()))
        guard case .responding = state else { return }  // sending failed and closed
        finish()
        let session = tls?.session
        tls = nil
        transport.delegate = makeHandler(transport, session)
        transport.resumeReading()
    }

    private var isAnswering: Bool {
        if case .responding = state { return true }
        return false
    }

    private static func expectsContinue(_ request: HTTPRequestHead) -> Bool {
        request[field: "expect"]?.lowercased() == "100-continue"
    }

    /// Sends file chunks while the output waiting for the socket stays
    /// under `sendWindow`.
    private func pump(_ source: FileSource) {
        if fileBuffer.isEmpty { fileBuffer = [UInt8](repeating: 0, count: 64 << 10) }
        while source.remaining > 0, let transport, transport.queuedByteCount < Self.sendWindow {
            let wanted = min(source.remaining, fileBuffer.count)
            let count = fileBuffer.withUnsafeMutableBytes {
                UploadFiles.readSome(source.descriptor, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<wanted]))
            }
            guard count > 0 else {
                log.error("reading a file to send failed (read returned \(count))")
                return close()
            }
            source.remaining -= count
            fileBuffer.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            guard case .sendingFile = state else { return }  // sending failed and closed
        }
        if source.remaining == 0 { close() }
    }

    // MARK: - Output and closing

    private func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { send($0) }
    }

    private func send(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, let transport else { return }
        guard let tls else { return transport.write(bytes) }
        do {
            try tls.send(bytes)
        } catch {
            log.info("TLS failed while sending: \(error)")
            close()
        }
    }

    /// Closes after what is queued, once.
    func close() {
        if case .closed = state { return }
        if case .receivingBody(let sink, _) = state { sink.abort() }
        tls?.close()
        finish()
        transport?.close()
    }

    private func finish() {
        state = .closed
        timer?.cancel()
        timer = nil
        fileBuffer = []
    }

    // MARK: - Timeouts

    /// Checks for a stalled client every so often (one timer, re-armed for
    /// the time left, rather than one per read).
    private func scheduleTimeoutCheck(after delay: Duration) {
        timer = loop.scheduleTimer(after: delay) { [weak self] in
            guard let self else { return }
            let idle = lastProgress.duration(to: loop.now)
            guard idle >= timeout else { return scheduleTimeoutCheck(after: timeout - idle) }
            switch state {
            case .readingHead, .receivingBody:
                log.info("request timed out")
                if case .receivingBody(let sink, _) = state { sink.abort() }
                state = .responding
                unreadBody = 0  // nothing more is read: answer and close
                respond(.text(.requestTimeout, "the request took too long"))
            case .sendingFile, .discarding:
                log.info("the client stopped reading; closing")
                close()
            case .responding:
                scheduleTimeoutCheck(after: timeout)  // the server's turn: storage
            case .closed:
                return
            }
        }
    }
}

extension HTTPConnection: ByteTransportDelegate {
    func didRead(bytes: UnsafeRawBufferPointer) { receive(bytes) }
    func didDrain() { transportDidDrain() }
    func didClose(error: IOError?) { transportClosed() }
}
