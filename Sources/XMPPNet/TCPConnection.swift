#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A non-blocking TCP connection owned by one `EventLoop`.
///
/// All methods must be called on the loop's thread. Writes go straight to the
/// socket when it has room; the rest is queued and sent when epoll reports
/// the socket writable.
///
/// Backpressure: while more than `Options.highWaterMark` bytes wait to be
/// sent, the connection stops reading, so a peer that sends requests but
/// does not read the answers cannot make the server buffer without bound.
/// Reading resumes once the backlog falls to `Options.lowWaterMark`.
/// Independently, the owner may `pauseReading()` (for example while its
/// session waits for the database, which keeps stanzas in order).
///
/// The loop keeps an open connection alive; the connection keeps its handler
/// alive until it closes.
public final class TCPConnection {
    /// Tuning for one connection.
    public struct Options: Sendable {
        /// Stop reading while more unsent bytes than this are queued.
        /// Default 1 MiB.
        public var highWaterMark: Int
        /// Resume reading once the queue is down to this many bytes.
        /// Default 256 KiB: far enough below the high-water mark that a
        /// connection does not flap between paused and reading.
        public var lowWaterMark: Int
        /// Reads (of up to 64 KiB each) per readiness event before the loop
        /// turns to other connections. Default 4.
        public var readsPerWakeup: Int
        /// How long `close(afterFlush: true)` may wait for the peer to take
        /// the queued output; then the connection is dropped with what is
        /// left. A peer that stops reading (a zero window) would otherwise
        /// hold the descriptor and the queue forever. Default 5 s.
        public var closeTimeout: Duration
        /// `TCP_USER_TIMEOUT` for accepted connections: how long sent data
        /// may stay unacknowledged (zero-window probes included) before the
        /// kernel gives up on the peer. `nil` keeps the system's default
        /// (about 15 minutes of retransmissions). Default `nil`.
        public var unacknowledgedTimeout: Duration?

        /// Creates settings; the defaults suit a client-to-server session.
        public init(
            highWaterMark: Int = 1 << 20, lowWaterMark: Int = 256 << 10, readsPerWakeup: Int = 4,
            closeTimeout: Duration = .seconds(5), unacknowledgedTimeout: Duration? = nil
        ) {
            precondition(0 <= lowWaterMark && lowWaterMark <= highWaterMark, "need 0 <= lowWaterMark <= highWaterMark")
            precondition(readsPerWakeup > 0, "readsPerWakeup must be positive")
            self.highWaterMark = highWaterMark
            self.lowWaterMark = lowWaterMark
            self.readsPerWakeup = readsPerWakeup
            self.closeTimeout = closeTimeout
            self.unacknowledgedTimeout = unacknowledgedTimeout
        }
    }

    enum State {
        /// A connect is in progress (see TCPConnection+Connect.swift).
        case connecting
        case open
        /// Flushing the queued output before closing; no more reads or writes.
        case closing
        /// Output sent and shut down (FIN); reading and discarding what the
        /// peer still sends until it closes too or `lingerTimeout` passes.
        /// Closing with unread input would make the kernel answer with RST,
        /// and a peer that gets RST may lose data it had received but not
        /// yet read: the end of our output, such as a stream error.
        case draining
        case closed
    }

    /// The loop that owns this connection (another one after `move(to:)`).
    public internal(set) var loop: EventLoop
    /// The peer's address.
    public let remoteAddress: SocketAddress
    /// The local address of the socket, looked up on first use (nil if the
    /// connection was already closed by then).
    public private(set) lazy var localAddress: SocketAddress? = state == .closed ? nil : Sys.localAddress(fd)
    /// Receives reads and the close. Set it before the `onAccept` or
    /// `connect` callback returns.
    public var handler: (any ByteTransportDelegate)?
    /// The flow-control settings.
    public let options: Options

    let fd: Int32
    var state: State
    /// The loop registration (0 before `start()` for an accepted connection).
    var registrationID: UInt32 = 0
    var registeredInterest: Interest = []
    private var outbound = ByteQueue()
    /// Ends `.closing` after `closeTimeout`, or `.draining` after
    /// `lingerTimeout`, if the peer has not let it end sooner.
    private var lingerTimer: EventLoop.Timer?
    /// True once the peer has finished sending (a read returned 0).
    private var peerFinished = false

    /// How long a closed connection keeps reading what the peer still
    /// sends before it closes anyway (see `State.draining`).
    public static let lingerTimeout: Duration = .seconds(2)

    /// Pending `connect` callback and its timeout (TCPConnection+Connect.swift).
    var connectCompletion: ((Result<TCPConnection, IOError>) -> Void)?
    var connectTimer: EventLoop.Timer?

    /// True while the owner has paused reading with `pauseReading()`.
    public private(set) var isReadingPaused = false
    /// True while more than `highWaterMark` bytes wait to be sent (reading
    /// is paused until the queue drains to `lowWaterMark`).
    public private(set) var isBackpressured = false

    init(fd: Int32, remoteAddress: SocketAddress, loop: EventLoop, options: Options, state: State) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.loop = loop
        self.options = options
        self.state = state
    }

    /// True until the connection starts closing.
    public var isOpen: Bool { state == .open }

    /// Bytes written but not yet handed to the kernel.
    public var bufferedByteCount: Int { outbound.count }

    /// Sends `bytes`: at once as far as the socket takes them, the rest when
    /// it has room. Ignored once the connection is closing or closed (a
    /// stanza routed to a session that just went away is dropped there).
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Sends a copy of `bytes`, like `write(_: [UInt8])`.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        loop.assertInLoop()
        guard state == .open, !bytes.isEmpty else { return }
        var rest = bytes
        if outbound.isEmpty {
            switch send(bytes) {
            case nil: return
            case let sent?: rest = UnsafeRawBufferPointer(rebasing: bytes[sent...])
            }
            if rest.isEmpty { return }
        }
        outbound.append(rest)
        if outbound.count > options.highWaterMark { isBackpressured = true }
        updateInterest()
    }

    /// Stops delivering reads until `resumeReading()`. Unread bytes wait in
    /// the kernel, and once its buffer fills, TCP flow control holds the peer.
    public func pauseReading() {
        loop.assertInLoop()
        isReadingPaused = true
        updateInterest()
    }

    /// Delivers reads again after `pauseReading()`.
    public func resumeReading() {
        loop.assertInLoop()
        isReadingPaused = false
        updateInterest()
    }

    /// Closes the connection.
    /// - Parameter afterFlush: false (the default) closes at once and drops
    ///   unsent output. true stops reading, sends what is queued, then shuts
    ///   down the sending side (FIN) and closes: the way to end a stream
    ///   after `</stream:stream>` (RFC 6120 §4.4).
    ///
    /// The handler's `didClose(error: nil)` runs when the connection is
    /// closed, which is before this method returns unless output is still
    /// being flushed, which may take at most `Options.closeTimeout`. After a
    /// flush, unless the peer has finished sending
    /// already, the descriptor stays open for up to `lingerTimeout`,
    /// reading and dropping what still arrives, so that the kernel does not
    /// reset the connection under the peer's unread data.
    public func close(afterFlush: Bool = false) {
        loop.assertInLoop()
        guard state == .open || state == .closing else { return }
        if afterFlush && !outbound.isEmpty {
            guard state == .open else { return }
            state = .closing
            lingerTimer = loop.schedule(after: options.closeTimeout) { [weak self] in
                self?.finish(error: IOError(errno: ETIMEDOUT, reason: "the peer did not take the last output"))
            }
            updateInterest()
        } else if afterFlush {
            shutDownAndDrain()
        } else {
            finish(error: nil)
        }
    }

    /// Sends FIN, tells the handler the connection is closed, and drains
    /// the peer's input until it closes (or closes at once if it has).
    private func shutDownAndDrain() {
        lingerTimer?.cancel()
        lingerTimer = nil
        Sys.shutdownOutput(fd)
        guard !peerFinished else { return finish(error: nil) }
        state = .draining
        let handler = self.handler
        self.handler = nil
        handler?.didClose(error: nil)
        guard state == .draining else { return }
        lingerTimer = loop.schedule(after: Self.lingerTimeout) { [weak self] in self?.finish(error: nil) }
        updateInterest()
    }

    // MARK: Loop side

    /// Registers with the loop once the owner has had its chance to set a
    /// handler (after `onAccept`, or after `connect`'s completion).
    func start() {
        guard state == .open || state == .closing else { return }
        precondition(
            handler != nil || state == .closing,
            "set TCPConnection.handler in onAccept/connect, or close the connection")
        do throws(IOError) {
            if registrationID == 0 {
                registrationID = try loop.register(fd: fd, interest: wantedInterest, owner: self)
                registeredInterest = wantedInterest
            } else {
                updateInterest()
            }
        } catch {
            finish(error: error)
        }
    }

    /// Closes the descriptor and reports `error` to the handler, once.
    func finish(error: IOError?) {
        guard state != .closed else { return }
        state = .closed
        connectTimer?.cancel()
        connectTimer = nil
        lingerTimer?.cancel()
        lingerTimer = nil
        if registrationID != 0 { loop.deregister(fd: fd, id: registrationID) }
        Sys.close(fd)
        outbound.removeAll()
        let handler = self.handler
        self.handler = nil
        handler?.didClose(error: error)
        loop.trimHeapSoon()
    }

    private var wantedInterest: Interest {
        var interest: Interest = []
        if state == .open && !isReadingPaused && !isBackpressured || state == .draining {
            interest.insert(.readable)
        }
        if state == .connecting || !outbound.isEmpty { interest.insert(.writable) }
        return interest
    }

    func updateInterest() {
        guard registrationID != 0, state != .closed else { return }
        let wanted = wantedInterest
        guard wanted != registeredInterest else { return }
        do throws(IOError) {
            try loop.reregister(fd: fd, id: registrationID, interest: wanted)
            registeredInterest = wanted
        } catch {
            finish(error: error)
        }
    }

    /// Sends from `bytes`; returns how many went out (0 if the socket is
    /// full), or nil if the send failed and the connection is now closed.
    private func send(_ bytes: UnsafeRawBufferPointer) -> Int? {
        do throws(IOError) {
            switch try Sys.send(fd, bytes) {
            case .processed(let sent): return sent
            case .wouldBlock: return 0
            }
        } catch {
            finish(error: error)
            return nil
        }
    }

    /// Sends queued output until the socket is full or the queue is empty,
    /// then updates backpressure, interest and a pending close.
    private func flush() {
        guard !outbound.isEmpty else { return }
        while !outbound.isEmpty {
            let queued = outbound.count
            guard let sent = send(outbound.readableBytes) else { return }
            outbound.consume(sent)
            if sent < queued { break }  // the socket is full; wait for EPOLLOUT
        }
        if isBackpressured && outbound.count <= options.lowWaterMark { isBackpressured = false }
        if outbound.isEmpty && state == .closing {
            shutDownAndDrain()
            return
        }
        updateInterest()
        if outbound.isEmpty { handler?.didDrain() }
    }

    /// Reads up to `readsPerWakeup` times into the loop's buffer.
    private func readAvailable() {
        let buffer = loop.readBuffer
        for _ in 0..<options.readsPerWakeup {
            let result: IOResult<Int>
            do throws(IOError) {
                result = try Sys.read(fd, into: buffer)
            } catch {
                finish(error: error)
                return
            }
            guard case .processed(let count) = result else { return }
            if count == 0 {
                // The peer finished sending. Send what is queued, then close.
                peerFinished = true
                close(afterFlush: true)
                return
            }
            handler?.didRead(bytes: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            guard state == .open, !isReadingPaused, !isBackpressured, count == buffer.count else { return }
        }
    }
}

extension TCPConnection: Selectable {
    func handle(_ events: ReadinessEvents) {
        switch state {
        case .connecting:
            finishConnecting(events)
        case .open, .closing:
            if events.contains(.error) {
                let code = Sys.pendingError(fd)
                finish(error: IOError(errno: code == 0 ? EIO : code, reason: "socket"))
                return
            }
            if events.contains(.writable) { flush() }
            guard state != .closed else { return }
            if registeredInterest.contains(.readable), !events.isDisjoint(with: [.readable, .readHangup, .hangup]) {
                readAvailable()
            } else if events.contains(.hangup) {
                // Both directions are gone and we are not reading: nothing can be sent any more.
                finish(error: outbound.isEmpty ? nil : IOError(errno: EPIPE, reason: "peer hung up"))
            }
        case .draining:
            if events.contains(.error) { return finish(error: nil) }
            drainAvailable()
        case .closed:
            return
        }
    }

    /// Reads and drops what the peer still sends while draining; closes at
    /// its end of stream or on an error (a reset: nothing left to protect).
    private func drainAvailable() {
        for _ in 0..<options.readsPerWakeup {
            let result: IOResult<Int>
            do throws(IOError) {
                result = try Sys.read(fd, into: loop.readBuffer)
            } catch {
                return finish(error: nil)
            }
            switch result {
            case .wouldBlock: return
            case .processed(0): return finish(error: nil)
            case .processed: continue
            }
        }
    }

    func loopWillStop() {
        if state == .connecting {
            failConnecting(IOError(errno: ECANCELED, reason: "event loop stopped"))
        } else {
            finish(error: IOError(errno: ECANCELED, reason: "event loop stopped"))
        }
    }
}
