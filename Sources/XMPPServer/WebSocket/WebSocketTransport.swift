import XMPPCore
import XMPPNet

/// An upgraded HTTP connection carrying one XMPP stream (RFC 7395), as the
/// transport of a `ClientSession`: each `write` is one text message, each
/// message read is handed to the session whole, by itself.
///
/// Below it is the connection's byte transport, and TLS when the upgrade
/// came over HTTPS (`underlyingTLS`: the session then counts as encrypted
/// and takes its channel bindings from it). Pings from the client are
/// answered here; a pong reaches the session as an empty read, which,
/// like a whitespace keepalive on TCP, shows the client is alive.
/// `sendPing()` is the server's keepalive.
///
/// Reading pauses strictly: no message is handed on while paused (the
/// session waits for storage), so a session sees exactly one message per
/// read. Messages decoded meanwhile wait here; as reading below pauses at
/// the same time, they are at most one read's worth.
///
/// Closing: `close()` sends a close frame after what is queued, then
/// closes; a close frame from the client is answered, and the connection
/// closed, once the messages before it have been handed on (a browser
/// sends its last presence and closes at once); a frame that breaks RFC
/// 6455 closes with its status code.
///
/// Confined to the loop; the connection below owns this transport (as
/// its delegate) and this transport owns the session until it reports the
/// close.
final class WebSocketTransport: SessionTransport, ByteTransportDelegate {
    var delegate: (any ByteTransportDelegate)?
    private weak var connection: (any ByteTransport)?
    private var secureChannel: SecureChannel?
    private var decoder: WebSocketFrameDecoder
    private let peer: SocketAddress
    private let log: Logger
    private var isPaused = false
    /// Messages (and pongs, as empty messages) decoded while paused.
    private var pending: [[UInt8]] = []
    private var pendingHead = 0
    /// Set once our close frame is queued: nothing is written after it.
    private var closeSent = false
    /// Set when the client's close frame came: nothing more is read, and
    /// the close is answered once `pending` is handed on.
    private var closeReceived = false

    /// The largest message the client may send: the stream's stanza limit
    /// before login (`max_stanza_size_unauthenticated`) and after it.
    var maxMessageSize: Int {
        get { decoder.maxMessageSize }
        set { decoder.maxMessageSize = newValue }
    }

    /// Takes over `connection` after the `101` answer; `tls` is HTTPS's
    /// session.
    init(
        connection: any ByteTransport, tls: TLSSession?, peer: SocketAddress, maxMessageSize: Int, log: Logger
    ) {
        self.connection = connection
        self.peer = peer
        self.log = log
        decoder = WebSocketFrameDecoder(maxMessageSize: maxMessageSize)
        secureChannel = tls.map { SecureChannel($0) { [unowned self] in self.connection?.write($0) } }
    }

    // MARK: - SessionTransport

    var peerAddress: String { peer.description }
    var peerHost: String { peer.ipString }
    var peerIsLoopback: Bool { peer.isLoopback }
    var underlyingTLS: TLSSession? { secureChannel?.session }
    var queuedByteCount: Int { connection?.queuedByteCount ?? 0 }

    /// Sends `bytes` (one element) as one text message.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !closeSent else { return }
        send(WebSocketFrameEncoder.text(bytes))
    }

    /// Sends a ping: the keepalive of RFC 7395 streams, which have no
    /// whitespace between elements.
    func sendPing() {
        guard !closeSent else { return }
        send(WebSocketFrameEncoder.ping)
    }

    func close() { close(.normal) }

    func abort() { connection?.abort() }

    func pauseReading() {
        isPaused = true
        connection?.pauseReading()
    }

    func resumeReading() {
        isPaused = false
        deliverPending()
        if !isPaused { connection?.resumeReading() }
    }

    // MARK: - ByteTransportDelegate (from the connection)

    func didRead(bytes: UnsafeRawBufferPointer) {
        guard !closeSent, !closeReceived else { return }
        guard let secureChannel else { return decode(bytes) }
        do {
            let plaintext = try secureChannel.receive(bytes)
            if !plaintext.isEmpty { plaintext.withUnsafeBytes { decode($0) } }
        } catch {
            log.info("TLS failed: \(error)")
            connection?.abort()
        }
    }

    func didDrain() { delegate?.didDrain() }

    func didClose(error: IOError?) {
        let delegate = self.delegate
        self.delegate = nil
        pending = []
        delegate?.didClose(error: error)
    }

    // MARK: - Frames

    private func decode(_ bytes: UnsafeRawBufferPointer) {
        let frames = decoder.feed(bytes)
        if let violation = frames.violation {
            // What came before the broken frame is dropped with it: the
            // client broke the protocol, and its stream ends here.
            log.notice("WebSocket closed: \(violation.reason)")
            return close(violation.code)
        }
        for input in frames.inputs {
            switch input {
            case .message(let message):
                pending.append(message)
            case .pong:
                pending.append([])
            case .ping(let payload):
                send(WebSocketFrameEncoder.pong(payload))
            case .close(let code):
                log.info("the client closed the WebSocket\(code.map { " (\($0))" } ?? "")")
                closeReceived = true
                return deliverPending()
            }
        }
        deliverPending()
    }

    /// Hands waiting messages to the session, one read each, until it
    /// pauses reading.
    private func deliverPending() {
        while !isPaused, pendingHead < pending.count, let delegate {
            let message = pending[pendingHead]
            pendingHead += 1
            message.withUnsafeBytes { delegate.didRead(bytes: $0) }
        }
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
            if closeReceived { close(.normal) }
        }
    }

    private func close(_ code: WebSocketCloseCode) {
        guard !closeSent else { return }
        send(WebSocketFrameEncoder.close(code))
        closeSent = true
        secureChannel?.close()
        connection?.close()
    }

    private func send(_ frame: [UInt8]) {
        guard let secureChannel else { return connection?.write(frame) ?? () }
        do {
            try secureChannel.send(frame)
        } catch {
            log.info("TLS failed while sending: \(error)")
            connection?.abort()
        }
    }
}
