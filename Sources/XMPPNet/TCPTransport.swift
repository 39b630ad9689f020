/// A `TCPConnection` as a `ByteTransport`: the one adapter between a
/// socket and the code that speaks over it (an XMPP session, an HTTP
/// connection, the client's stream).
///
/// The connection owns the transport (as its handler), and the transport
/// owns its delegate until the connection closes; `onClose` then lets an
/// owner that keeps a table of connections forget this one. Once the
/// connection starts closing, writes, pauses and closes are ignored.
///
/// Confined to the connection's loop.
public final class TCPTransport: ByteTransport, ByteTransportDelegate {
    /// The connection; weak, since the connection owns its handler.
    public private(set) weak var connection: TCPConnection?
    /// The peer's address, kept for logs after the connection is gone.
    public let remoteAddress: SocketAddress
    public var delegate: (any ByteTransportDelegate)?
    /// Runs once, after the delegate heard of the close.
    public var onClose: (() -> Void)?

    /// Adapts `connection`, becoming its handler.
    public init(_ connection: TCPConnection) {
        self.connection = connection
        remoteAddress = connection.remoteAddress
        connection.handler = self
    }

    /// The connection while it is open, nil once it closes or is closing.
    private var openConnection: TCPConnection? { connection.flatMap { $0.isOpen ? $0 : nil } }

    public func write(_ bytes: UnsafeRawBufferPointer) { openConnection?.write(bytes) }
    public var queuedByteCount: Int { connection?.bufferedByteCount ?? 0 }
    public func close() { openConnection?.close(afterFlush: true) }
    public func abort() { connection?.close() }
    public func pauseReading() { openConnection?.pauseReading() }
    public func resumeReading() { openConnection?.resumeReading() }

    // MARK: - ByteTransportDelegate (from the connection)

    public func didRead(bytes: UnsafeRawBufferPointer) { delegate?.didRead(bytes: bytes) }

    public func didDrain() { delegate?.didDrain() }

    public func didClose(error: IOError?) {
        let delegate = self.delegate
        self.delegate = nil
        delegate?.didClose(error: error)
        onClose?()
        onClose = nil
    }
}
