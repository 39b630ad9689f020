import Foundation
import XMPPCore
import XMPPNet
import XMPPStorage

/// One client-to-server stream (RFC 6120), from the first byte to the
/// close: negotiation (STARTTLS, SASL, binding), then stanzas to the router.
///
/// Confined to its loop: every entry point runs on `server.loop` (which
/// changes once, when the session moves to its account's: `moveHome`). The
/// negotiation steps live in extensions, one file each
/// (`ClientSession+Negotiation`, `+SASL`, `+Binding`).
public final class ClientSession {
    /// Where the stream is in RFC 6120's sequence.
    enum Phase: Equatable {
        /// Before authentication: STARTTLS, SASL and registration are
        /// allowed. (Each stream, first or restarted, begins with the
        /// client's header: the parser reports nothing before it.)
        case negotiating
        /// SASL succeeded; binding (and the legacy session) are allowed.
        case authenticated
        /// A resource is bound; stanzas are routed.
        case bound
        /// The stream is closing or closed; input is ignored.
        case closed
    }

    /// The context of the loop the session is on: another one once it has
    /// moved to its account's loop (`moveHome`).
    var server: ServerContext
    /// The connection; weak because the connection owns the session (its
    /// handler), and every use is skipped once the session is closed.
    weak var transport: (any SessionTransport)?
    /// The peer's IP address, for per-address throttling.
    var peerHost: String
    /// When the connection was accepted, by the wall clock (for the
    /// admins' list of sessions).
    let connectedAt: Date
    /// The client software the SASL2 request named (XEP-0388
    /// `<user-agent><software/>`), if any.
    var clientSoftware: String?
    var log: Logger
    var parser: XMLStreamParser
    /// How the stream's XML travels: one document over TCP, or a message
    /// per element over a WebSocket (`ClientSession+WebSocket`).
    var framing: StreamFraming
    var phase = Phase.negotiating
    /// The stream id we sent in our last header.
    var streamID = ""
    /// Whether our opening tag for the current stream has been sent.
    var headerSent = false
    /// The `xml:lang` of the client's stream header, when it is a
    /// well-formed language tag: the default language of its stanzas,
    /// added to those that carry none (RFC 6120 §4.7.4).
    var streamLanguage: String?
    /// TLS once STARTTLS (or direct TLS) began, its records written
    /// through `transmit`.
    private var secureChannel: SecureChannel?
    /// The TLS layer once STARTTLS (or direct TLS) began. Setting it (at
    /// STARTTLS, or when a resumed session takes over a connection) sends
    /// its records through this session's output.
    var tls: TLSSession? {
        get { secureChannel?.session }
        set { secureChannel = newValue.map { SecureChannel($0) { [unowned self] in self.transmit($0) } } }
    }
    /// The authenticated account's localpart.
    var username: String?
    /// `SessionRegistry.revocationCount(of:)` for the account when its
    /// credentials were looked up; if the count has grown by the time the
    /// session binds, the password changed or the account was deleted in
    /// between, and it may not bind.
    var accountRevocations = 0
    /// The bound full JID.
    var jid: JID?
    /// This session's entry in the registry, once bound.
    public internal(set) var handle: SessionHandle?
    /// What features keep for this session (roster and blocklist interest,
    /// carbons, client state, directed presence), each under its own key.
    public var state = FeatureState()
    /// The SASL exchange in progress and how many have failed on this
    /// stream. Out of line, from its first change until the stream is bound
    /// and idle, so that a bound session does not carry it.
    var sasl: SASLState {
        get { saslStorage?.state ?? SASLState() }
        _modify {
            let storage = saslStorage ?? SASLStateStorage()
            saslStorage = storage
            yield &storage.state
        }
    }
    private var saslStorage: SASLStateStorage?
    /// When the last bytes arrived, for the idle timeout.
    var lastReceived: ContinuousClock.Instant
    /// When the last bytes were sent, for whitespace keepalives.
    var lastSent: ContinuousClock.Instant
    /// Ends the stream if it is not bound by `handshakeDeadline`.
    var handshakeTimer: (any ScheduledWork)?
    /// When negotiation must be done: `handshake_timeout` after connecting,
    /// plus any wait a throttled login imposed.
    var handshakeDeadline: ContinuousClock.Instant
    var idleTimer: (any ScheduledWork)?
    /// How many storage round trips the session waits for; no input is
    /// handled while any is outstanding.
    var storageWaits = 0
    var isWaiting: Bool { storageWaits > 0 }
    /// Parsed but not yet handled, because the session began waiting (a
    /// client may pipeline several requests in one packet).
    var queuedEvents: [XMLStreamEvent] = []
    /// The next event of `queuedEvents` to handle.
    var queueHead = 0
    /// Input that arrived while waiting (a transport may deliver one last
    /// read after `pauseReading()`).
    var heldInput: [UInt8] = []
    /// XEP-0198 state once the client enabled stream management.
    var streamManagement: StreamManagementState<[UInt8]>?
    /// Whether the connection is gone and the session waits to be resumed
    /// (XEP-0198 §5); stanzas for it are queued, not written.
    var isDetached = false
    /// Ends a detached session that was not resumed in time, or asks a
    /// quiet client for an acknowledgement.
    var streamManagementTimer: (any ScheduledWork)?
    /// Set once more than `max_queued_output` waited for this client, as
    /// the stream is closed for it.
    private var outputOverflowed = false
    /// Output held back inside `sendingTogether`, to go out in one write.
    private var coalescedOutput: [UInt8]?
    /// How many `holdDeliveries()` wait for their `releaseDeliveries()`;
    /// while any does, stanzas routed to this client wait in
    /// `heldDeliveries`, serialized.
    var deliveryHolds = 0
    var heldDeliveries: [(bytes: [UInt8], kind: Stanza.Kind)] = []
    var heldDeliveryByteCount = 0

    /// Creates the session for a connection that has just been accepted.
    /// - Parameter directTLS: The connection began with TLS (XEP-0368).
    public init(server: ServerContext, transport: any SessionTransport, id: Int, directTLS: Bool = false) {
        self.server = server
        self.transport = transport
        self.peerHost = transport.peerHost
        self.connectedAt = server.wallClock.date
        self.log = server.log.labelled("c2s#\(id) \(transport.peerAddress)")
        self.parser = XMLStreamParser(limits: server.unauthenticatedLimits)
        self.framing = transport is WebSocketTransport ? .webSocket : .xmlStream
        self.lastReceived = server.loop.now
        self.lastSent = server.loop.now
        self.handshakeDeadline = server.loop.now + server.config.timeouts.handshake
        if directTLS, let context = server.tlsContext {
            tls = TLSSession(context: context)
        }
        log.info("connected\(directTLS ? " (direct TLS)" : "")\(framing == .webSocket ? " (WebSocket)" : "")")
        primeParser()
        startTimers()
    }

    // MARK: - Input

    /// Handles bytes from the transport.
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        server.loop.assertInLoop()
        guard phase != .closed else { return }
        lastReceived = server.loop.now
        guard !isWaiting else {
            heldInput.append(contentsOf: bytes)
            return
        }
        guard let secureChannel else { return parse(bytes) }
        do {
            let plaintext = try secureChannel.receive(bytes)
            if !plaintext.isEmpty { plaintext.withUnsafeBytes { parse($0) } }
        } catch {
            log.notice("TLS failed: \(error)")
            closeTransport()
        }
    }

    /// The transport reports that the connection is gone: the peer went
    /// away (cleanly or not), or a stream we closed has ended.
    /// - Parameter failure: Why, when the connection failed rather than
    ///   closed, such as a reset or a peer that did not take our goodbye
    ///   within `close_timeout`.
    public func transportClosed(failure: String? = nil) {
        server.loop.assertInLoop()
        guard phase != .closed else {
            if let failure { log.info("connection dropped: \(failure)") }
            return
        }
        log.info("disconnected\(failure.map { ": \($0)" } ?? "")")
        if canWaitForResumption { return detach() }
        finish()
    }

    private func parse(_ bytes: UnsafeRawBufferPointer) {
        let events = parser.feed(bytes)
        if framing == .webSocket, let violation = Self.framingViolation(events, message: bytes) {
            return fail(violation)
        }
        queuedEvents += events
        handleQueuedEvents()
    }

    /// Handles parsed events in order until the queue is empty or the
    /// session waits. Safe to re-enter: each event is taken off the queue
    /// before it is handled.
    func handleQueuedEvents() {
        while !isWaiting, phase != .closed, queueHead < queuedEvents.count {
            let event = queuedEvents[queueHead]
            queueHead += 1
            handle(event)
        }
        if queueHead == queuedEvents.count {
            queuedEvents.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        releaseParserWhileIdle()
    }

    /// Frees the parser's Expat between stanzas of a bound stream with
    /// nothing left to handle: an idle stream then holds no parser memory,
    /// and the next read recreates it (`XMLStreamParser.releaseWhileIdle`).
    /// The queue's capacity goes too, and the finished SASL exchange.
    private func releaseParserWhileIdle() {
        guard phase == .bound, !isWaiting, queuedEvents.isEmpty, parser.releaseWhileIdle() else { return }
        queuedEvents = []
        saslStorage = nil
    }

    private func handle(_ event: XMLStreamEvent) {
        switch event {
        case .streamOpen(let header):
            receiveHeader(header)
        case .element(let element):
            if framing == .webSocket, element.namespace == NS.framing {
                return receiveFraming(element)
            }
            if framing == .webSocket, !headerSent {
                return fail(StreamError(.notWellFormed, text: "a stream over WebSocket begins with <open/>"))
            }
            receiveElement(element)
        case .streamClose:
            receiveStreamClose()
        case .error(let error):
            log.notice("bad XML: \(error)")
            if error.kind == .policyViolation { server.metrics.limitsHit.increment(.maxStanzaSize) }
            fail(error.streamError)
        }
    }

    /// Expects a new stream header, after STARTTLS or SASL success (RFC
    /// 6120 §5.4.3.3, §6.4.6). Anything parsed after the element that
    /// caused it belonged to the old stream and is dropped: the client
    /// must wait for our answer before sending more.
    func restartStream() {
        parser.reset()
        queuedEvents.removeAll()
        queueHead = 0
        headerSent = false
        primeParser()
    }

    /// The client ended the stream (`</stream:stream>`, or `<close/>` over
    /// a WebSocket): ours ends too.
    func receiveStreamClose() {
        log.info("client closed the stream")
        sendStreamClose()
        closeTransport()
    }

    /// Handles input held back while waiting.
    private func resumeAfterWaiting() {
        guard isWaiting else { return }
        storageWaits -= 1
        guard !isWaiting, phase != .closed else { return }
        continueInput()
    }

    /// Reads again and handles what was parsed or received meanwhile: after
    /// a wait, or when this session took over a connection that was
    /// waiting (a resumption inside SASL2).
    func continueInput() {
        transport?.resumeReading()
        handleQueuedEvents()
        guard !isWaiting, !heldInput.isEmpty, phase != .closed else { return }
        let input = heldInput
        heldInput = []
        input.withUnsafeBytes { receive($0) }
    }

    /// Runs `job` on the storage thread with this session's input paused,
    /// then `completion` on the loop: stanzas the client sent after the one
    /// that needed storage are handled only afterwards, in order.
    ///
    /// - Parameter grouped: Whether `job` joins a group commit (see
    ///   `StorageJobs.submitGrouped`): the session stays paused until the
    ///   commit that holds its writes has returned.
    public func withStorage<Value: Sendable>(
        grouped: Bool = false, _ job: @escaping @Sendable (Stores) throws -> Value,
        then completion: @escaping (Result<Value, any Error>) -> Void
    ) {
        waiting(
            for: { [server] done in server.storage.run(on: server.loop, grouped: grouped, job, then: done) },
            then: completion)
    }

    /// Starts `operation` with this session's input paused until it calls
    /// back (on the loop), then runs `completion`, then handles the input
    /// that waited: the one way a session waits, for storage jobs and
    /// account operations alike.
    public func waiting<Value>(
        for operation: (_ done: @escaping (Value) -> Void) -> Void, then completion: @escaping (Value) -> Void
    ) {
        storageWaits += 1
        transport?.pauseReading()
        operation { [self] value in
            // The completion's own output, and any wait it starts, come
            // before the stanzas that were held back.
            defer { resumeAfterWaiting() }
            guard phase != .closed else { return }
            completion(value)
        }
    }

    // MARK: - Output

    /// Sends an element inside the client stream's namespace scope.
    func send(_ element: Element) {
        guard let bytes = serialized(element) else { return }
        guard let stanza = Stanza(element) else { return send(bytes) }
        send(stanza: bytes, kind: stanza.kind)
    }

    /// `element` as the client stream carries it, or nil (logged) if it
    /// cannot be written.
    func serialized(_ element: Element) -> [UInt8]? {
        do {
            return try XMLSerializer.bytes(element, in: framing == .webSocket ? .document : Self.clientScope)
        } catch {
            // Only text from our own code or from a stanza we parsed reaches
            // here, so this is a bug; say so once and keep the stream.
            log.error("cannot serialize <\(element.name)>: \(error)")
            return nil
        }
    }

    /// Sends a serialized stanza, counting it (and, under stream
    /// management, keeping it until it is acknowledged).
    func send(stanza bytes: [UInt8], kind: Stanza.Kind) {
        server.metrics.stanzasSent.increment(kind)
        if streamManagement != nil { recordSent(bytes) }
        send(bytes)
    }

    /// Runs `body`, which sends many stanzas at once (an offline backlog),
    /// and hands what it sends to the connection in writes of about 64 KiB
    /// (in TLS records of up to 16 KiB), not one write (and one record) per
    /// stanza. The order of the output is kept, and it is all queued on the
    /// connection when this returns. Over WebSocket, where each stanza needs
    /// a frame of its own (RFC 7395 §3.3.3), output goes out as it comes.
    func sendingTogether(_ body: () -> Void) {
        guard framing == .xmlStream, coalescedOutput == nil else { return body() }
        coalescedOutput = []
        body()
        sendCoalescedOutput()
        coalescedOutput = nil
    }

    /// Sends what `sendingTogether` has held back so far.
    private func sendCoalescedOutput() {
        guard let bytes = coalescedOutput, !bytes.isEmpty, phase != .closed, !isDetached else { return }
        coalescedOutput = []
        sendNow(bytes)
    }

    /// Sends raw bytes, through TLS when it is on.
    func send(_ bytes: [UInt8]) {
        guard phase != .closed, !isDetached else { return }
        guard coalescedOutput != nil else { return sendNow(bytes) }
        coalescedOutput!.append(contentsOf: bytes)
        if coalescedOutput!.count >= Self.coalescedWriteSize { sendCoalescedOutput() }
    }

    /// Sends raw bytes at once, held back or not.
    private func sendNow(_ bytes: [UInt8]) {
        lastSent = server.loop.now
        guard let secureChannel else { return transmit(bytes) }
        do {
            try secureChannel.send(bytes)
        } catch {
            log.notice("TLS failed while sending: \(error)")
            closeTransport()
        }
    }

    /// Hands bytes to the connection. A client that stopped reading makes
    /// them pile up; past `max_queued_output` its stream is closed (which
    /// then waits at most `close_timeout` for the goodbye to be taken).
    private func transmit(_ bytes: [UInt8]) {
        guard let transport else { return }
        transport.write(bytes)
        checkQueuedOutput(transport.queuedByteCount)
    }

    /// Closes the stream, once, when more than `max_queued_output` bytes
    /// (`waiting`) wait for this client.
    func checkQueuedOutput(_ waiting: Int) {
        let limit = server.config.limits.maxQueuedOutput
        if waiting > limit, !outputOverflowed {
            outputOverflowed = true
            server.metrics.limitsHit.increment(.maxQueuedOutput)
            log.notice("more than \(limit) bytes wait for this client to read them")
            fail(StreamError(.resourceConstraint, text: "the client does not read what it is sent"))
        }
    }

    // MARK: - Closing

    /// Sends a stream error and closes (RFC 6120 §4.9.1.1). If our header
    /// was not sent yet, it goes first (§4.9.1.3).
    func fail(_ error: StreamError) {
        guard phase != .closed else { return }
        log.notice("stream error \(error.condition.rawValue)\(error.text.map { ": \($0)" } ?? "")")
        if !headerSent { sendHeader(to: nil) }
        send(error.element)
        sendStreamClose()
        closeTransport()
    }

    /// Turns away a connection the server cannot take, before it has said
    /// anything: our header and the stream error (RFC 6120 §4.9.1.3), or
    /// just the close on direct TLS, where no stream can be spoken yet.
    func refuse(_ error: StreamError) {
        guard tls == nil else {
            log.notice("refused: \(error.text ?? error.condition.rawValue)")
            finish()
            transport?.close()
            return
        }
        fail(error)
    }

    /// Closes the connection after what is queued, once.
    func closeTransport() {
        guard phase != .closed else { return }
        sendCoalescedOutput()
        closeTLS()
        finish()
        transport?.close()
    }

    /// Sends close_notify if TLS is on, before the connection closes.
    func closeTLS() {
        secureChannel?.close()
    }

    /// Releases everything the session holds; runs once.
    func finish() {
        phase = .closed
        handshakeTimer?.cancel()
        idleTimer?.cancel()
        streamManagementTimer?.cancel()
        queuedEvents = []
        queueHead = 0
        heldInput = []
        if let jid { server.sessions.remove(jid, ifSession: self) }
        server.hooks.sessionEnded(self)
        handle = nil  // the handle holds the session: break the cycle
    }

    // MARK: - Timers

    func startTimers() {
        armHandshakeTimer()
        restartIdleCheck()
    }

    /// Starts watching for silence (and keepalives) afresh, as when the
    /// connection opened.
    func restartIdleCheck() {
        idleTimer?.cancel()
        scheduleIdleCheck(after: min(server.config.timeouts.idle, server.config.timeouts.keepaliveInterval))
    }

    /// Gives negotiation `wait` more time, for a wait the server imposed
    /// (a throttled login).
    func postponeHandshakeDeadline(by wait: Duration) {
        guard let handshakeTimer else { return }
        handshakeTimer.cancel()
        handshakeDeadline += wait
        armHandshakeTimer()
    }

    private func armHandshakeTimer() {
        handshakeTimer = schedule(after: server.loop.now.duration(to: handshakeDeadline)) { session in
            guard session.phase != .bound else { return }
            session.fail(StreamError(.connectionTimeout, text: "negotiation took too long"))
        }
    }

    /// Closes a stream silent for `idleTimeout`, and sends a space after
    /// `keepaliveInterval` without output. One timer, re-armed for the
    /// remaining time, rather than one reset per read.
    private func scheduleIdleCheck(after delay: Duration) {
        idleTimer = schedule(after: delay) { session in
            let now = session.server.loop.now
            let config = session.server.config
            let silentFor = session.lastReceived.duration(to: now)
            if silentFor >= config.timeouts.idle {
                if session.canWaitForResumption {
                    session.log.info("idle for too long")
                    return session.detach()
                }
                return session.fail(StreamError(.connectionTimeout, text: "idle for too long"))
            }
            if session.phase == .bound, session.lastSent.duration(to: now) >= config.timeouts.keepaliveInterval {
                session.sendKeepalive()
            }
            let untilIdle = config.timeouts.idle - silentFor
            let untilKeepalive = config.timeouts.keepaliveInterval - session.lastSent.duration(to: now)
            session.scheduleIdleCheck(after: max(.milliseconds(10), min(untilIdle, untilKeepalive)))
        }
    }

    /// Runs `work` after `delay` on the loop, unless the session has ended.
    ///
    /// Timers hold their session until they fire or `finish()` cancels them
    /// (it cancels every timer it keeps). Nothing holds a session weakly,
    /// so retaining one, which routing does for each stanza, stays on the
    /// runtime's fast path (a weak reference moves an object's counts to a
    /// side table).
    func schedule(
        after delay: Duration, _ work: @escaping (ClientSession) -> Void
    ) -> any ScheduledWork {
        server.loop.scheduleTimer(after: delay) { [self] in
            guard phase != .closed else { return }
            work(self)
        }
    }

    // MARK: - Namespaces

    /// The scope stanzas are written in: `jabber:client` by default, the
    /// streams namespace with the conventional `stream:` prefix.
    ///
    /// COMPAT: XMPPFramework: it matches that prefix literally.
    /// How much output `sendingTogether` collects before it writes.
    static let coalescedWriteSize = 64 * 1024

    static let clientScope = XMLNamespaceScope(defaultNamespace: NS.client, prefixes: [NS.streams: "stream"])

    /// The shape of the header we send, for writing its closing tag.
    static let replyHeaderShape = StreamHeader(
        name: "stream", namespace: NS.streams, defaultNamespace: NS.client,
        prefixes: ["stream": NS.streams], attributes: [])
}
