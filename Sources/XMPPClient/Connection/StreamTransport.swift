import XMPPCore
import XMPPNet

/// The bytes of one client connection: a byte transport from the
/// configuration's `ClientConnector` (TCP by default), TLS once it is
/// started, and the XML stream parser, delivered as an async sequence of
/// stream events.
///
/// Every mutable property is touched only on `loop`; the methods hop there,
/// which is what makes the `@unchecked Sendable` sound.
final class StreamTransport: ByteTransportDelegate, @unchecked Sendable {
    /// Parsed stream events in arrival order. Ends when the connection
    /// closes: normally after an orderly close, or with the error that ended
    /// it (`XMPPClientError`).
    let events: AsyncThrowingStream<XMLStreamEvent, any Error>

    private let loop: any Loop
    private let continuation: AsyncThrowingStream<XMLStreamEvent, any Error>.Continuation
    private var connection: (any ByteTransport)?
    private var tls: SecureChannel?
    private var handshake: CheckedContinuation<Void, any Error>?
    private let parser = XMLStreamParser(limits: .init(maxStanzaSize: 16 << 20, maxTokenSize: 1 << 20))
    /// Closes the connection when the server stays silent this long.
    private var readTimeout: Duration?
    private var readTimer: (any ScheduledWork)?
    /// Set when our side ends the connection, so it is reported as such.
    private var closeReason: XMPPClientError?
    /// How many events went into `events` so far.
    private var deliveredEvents = 0

    private init(loop: any Loop) {
        self.loop = loop
        (events, continuation) = AsyncThrowingStream.makeStream()
    }

    /// Connects to `host` and `port` through `connector`.
    /// - Throws: `XMPPClientError.cannotConnect` with the last failure, or
    ///   `.timedOut`.
    static func connect(
        host: String, port: UInt16, timeout: Duration, through connector: any ClientConnector
    ) async throws(XMPPClientError) -> StreamTransport {
        let transport = StreamTransport(loop: try connector.loop())
        let outcome = await withCheckedContinuation { (done: CheckedContinuation<XMPPClientError?, Never>) in
            transport.loop.execute {
                connector.connect(host: host, port: port, timeout: timeout, delegate: transport) { result in
                    switch result {
                    case .success(let connection):
                        transport.connection = connection
                        done.resume(returning: nil)
                    case .failure(let error):
                        done.resume(returning: error)
                    }
                }
            }
        }
        if let outcome { throw outcome }
        return transport
    }

    // MARK: - Sending

    /// Writes `bytes` (through TLS once it is on), after everything sent before.
    func send(_ bytes: [UInt8]) {
        loop.execute { self.write(bytes) }
    }

    /// Forgets the parser's state and sends a new stream header, in one step
    /// on the loop, so no byte of the old stream is parsed as the new one.
    func restartStream(with header: [UInt8]) {
        loop.execute {
            self.parser.reset()
            self.write(header)
        }
    }

    private func write(_ bytes: [UInt8]) {
        guard let connection else { return }
        guard let tls else { return connection.write(bytes) }
        do {
            try tls.send(bytes)
        } catch {
            fail(.tls("\(error)"))
        }
    }

    // MARK: - TLS

    /// Starts TLS on the open connection (after `<proceed/>`) and returns
    /// once the handshake is done and the certificate accepted.
    ///
    /// RFC 6120 §5.4.3.3: after `<proceed/>` the server sends nothing until
    /// the TLS handshake, so an event parsed beyond the `eventsRead` the
    /// caller took (the last being `<proceed/>`) is plaintext that someone
    /// on the path may have injected. It must not reach the secured stream:
    /// the connection is dropped instead, and so are bytes of an
    /// unfinished event (the parser is reset).
    /// - Throws: `XMPPClientError.tls` for such plaintext or a failed
    ///   handshake.
    func startTLS(_ context: TLSContext, eventsRead: Int) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            loop.execute {
                guard self.connection != nil else {
                    return done.resume(throwing: self.closeReason ?? XMPPClientError.notConnected)
                }
                guard self.deliveredEvents == eventsRead else {
                    let error = XMPPClientError.tls("the server sent plaintext after <proceed/>")
                    self.fail(error)
                    return done.resume(throwing: error)
                }
                self.parser.reset()
                self.handshake = done
                self.tls = SecureChannel(TLSSession(context: context)) { [unowned self] in
                    self.connection?.write($0)
                }
            }
        }
    }

    /// The channel-binding data TLS supplies (RFC 9266, RFC 5929), by
    /// type; empty before TLS is on.
    func channelBindings() async -> [ChannelBindingType: [UInt8]] {
        await withCheckedContinuation { answer in
            loop.execute { answer.resume(returning: self.tls?.session.channelBindings ?? [:]) }
        }
    }

    // MARK: - Timeouts and closing

    /// Closes the connection with `XMPPClientError.timedOut` whenever the
    /// server sends nothing for `timeout`; `nil` turns that off.
    func setReadTimeout(_ timeout: Duration?) {
        loop.execute {
            self.readTimeout = timeout
            self.rearmReadTimer()
        }
    }

    private func rearmReadTimer() {
        readTimer?.cancel()
        readTimer = readTimeout.map { timeout in
            loop.scheduleTimer(after: timeout) { self.fail(.timedOut) }
        }
    }

    /// Sends `finalBytes` if any, then closes once they are written.
    func close(sending finalBytes: [UInt8] = []) {
        loop.execute {
            if !finalBytes.isEmpty { self.write(finalBytes) }
            self.tls?.close()
            self.connection?.close()
        }
    }

    /// Drops the connection at once; the event sequence ends with `reason`.
    func abort(_ reason: XMPPClientError) {
        loop.execute { self.fail(reason) }
    }

    private func fail(_ reason: XMPPClientError) {
        if closeReason == nil { closeReason = reason }
        connection?.abort()
    }

    // MARK: - ByteTransportDelegate

    func didRead(bytes: UnsafeRawBufferPointer) {
        rearmReadTimer()
        guard let tls else { return deliver(parser.feed(bytes)) }
        let plaintext: [UInt8]
        do {
            plaintext = try tls.receive(bytes)
        } catch {
            return fail(.tls("\(error)"))
        }
        if tls.session.isHandshakeComplete, let handshake {
            self.handshake = nil
            handshake.resume()
        }
        if !plaintext.isEmpty { deliver(parser.feed(plaintext)) }
    }

    private func deliver(_ parsed: [XMLStreamEvent]) {
        for event in parsed {
            if case .error(let error) = event {
                return fail(.streamError(.notWellFormed, text: "the server sent bad XML: \(error)"))
            }
            continuation.yield(event)
            deliveredEvents += 1
        }
    }

    func didClose(error: IOError?) {
        readTimer?.cancel()
        readTimer = nil
        connection = nil
        let reason = closeReason ?? error.map { XMPPClientError.cannotConnect("connection lost: \($0)") }
        if let handshake {
            self.handshake = nil
            handshake.resume(throwing: reason ?? XMPPClientError.tls("the server closed the connection"))
        }
        continuation.finish(throwing: reason)
    }
}
