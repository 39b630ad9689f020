/// A connection's bytes, whatever carries them: a TCP socket
/// (`TCPTransport`), memory in tests, or another platform's networking.
/// Protocol code (XMPP sessions, HTTP, the client's stream) is written
/// against this, so it runs unchanged over each.
///
/// Confined to one loop, like the code that owns it: call every member
/// there, and expect the delegate to be called there.
public protocol ByteTransport: AnyObject {
    /// Where reads and the close are reported; the transport holds it until
    /// it has reported the close.
    var delegate: (any ByteTransportDelegate)? { get set }
    /// Queues a copy of `bytes` for the peer; ignored once closing.
    func write(_ bytes: UnsafeRawBufferPointer)
    /// Bytes written and still waiting to be sent (beyond what the kernel
    /// took), which grows while the peer does not read.
    var queuedByteCount: Int { get }
    /// Sends what is queued, then closes; the delegate hears of it.
    func close()
    /// Closes at once, dropping what is queued; the delegate hears of it.
    func abort()
    /// Stops delivering received bytes until `resumeReading()`.
    func pauseReading()
    /// Delivers received bytes again.
    func resumeReading()
}

extension ByteTransport {
    /// Queues `bytes` for the peer.
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }
}

/// What a byte transport (a `TCPConnection`, a `ByteTransport`) tells its
/// owner. Called on the transport's loop.
public protocol ByteTransportDelegate: AnyObject {
    /// Bytes arrived from the peer.
    ///
    /// `bytes` may point into a shared read buffer and is valid only during
    /// this call: copy or parse it before returning.
    func didRead(bytes: UnsafeRawBufferPointer)

    /// Output that had to wait for the socket has all been handed to the
    /// kernel. Useful to produce more (a long archive query) only as fast as
    /// the peer takes it. Default: nothing.
    func didDrain()

    /// The connection is closed; called exactly once, after which the
    /// transport drops its reference to the delegate.
    /// - Parameter error: nil for an orderly close by either side; otherwise
    ///   why it ended, such as `ECONNRESET` or `EPIPE` from the peer, or
    ///   `ECANCELED` when the loop stopped.
    func didClose(error: IOError?)
}

extension ByteTransportDelegate {
    /// Does nothing: most delegates do not pace their output.
    public func didDrain() {}
}
