import XMPPCore
import XMPPNet

/// What a client session needs from its connection: a byte transport whose
/// delegate is the session, and the peer's address. XMPPNet's
/// `TCPTransport` is the real one; tests use an in-memory transport.
public protocol SessionTransport: ByteTransport {
    /// The peer's address and port, for logs.
    var peerAddress: String { get }
    /// The peer's IP address without the port, for per-address throttling.
    var peerHost: String { get }
    /// Whether the peer connects over loopback (exempt from registration
    /// throttling by default).
    var peerIsLoopback: Bool { get }
    /// TLS the transport runs below the stream (a WebSocket over HTTPS);
    /// nil when the stream itself negotiates TLS, as over TCP.
    var underlyingTLS: TLSSession? { get }
}

extension SessionTransport {
    /// None: the session does TLS itself.
    public var underlyingTLS: TLSSession? { nil }
}

extension SessionTransport {
    /// The session the transport hands what it reads, and its closing, to.
    /// Stream resumption (XEP-0198) moves a connection to the session it
    /// resumes; nil once the session is done with the connection.
    public var session: ClientSession? {
        get { delegate as? ClientSession }
        set { delegate = newValue }
    }
}

extension TCPTransport: SessionTransport {
    public var peerAddress: String { remoteAddress.description }
    public var peerHost: String { remoteAddress.ipString }
    public var peerIsLoopback: Bool { remoteAddress.isLoopback }
}

extension ClientSession: ByteTransportDelegate {
    /// Handles bytes from the transport; see `receive(_:)`.
    public func didRead(bytes: UnsafeRawBufferPointer) { receive(bytes) }

    /// The connection is gone; see `transportClosed(failure:)`.
    public func didClose(error: IOError?) { transportClosed(failure: error?.description) }
}
