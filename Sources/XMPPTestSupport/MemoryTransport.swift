import XMPPNet
import XMPPServer

/// A connection with no socket: what the session writes is collected for
/// the test to read; what the test sends goes straight into the session.
public final class MemoryTransport: SessionTransport {
    public var delegate: (any ByteTransportDelegate)?
    /// Everything written and not yet taken by `takeOutput()`.
    public private(set) var output: [UInt8] = []
    /// Whether the session closed the connection.
    public private(set) var isClosed = false
    /// Whether the session asked to stop reading.
    public private(set) var isReadingPaused = false
    /// How many writes the session made, taken or not.
    public private(set) var writeCount = 0
    public let peerAddress: String
    public let peerHost: String
    public let peerIsLoopback: Bool

    /// Creates a transport for a peer at `host`.
    public init(host: String = "127.0.0.1", port: Int = 40000) {
        peerHost = host
        peerAddress = "\(host):\(port)"
        peerIsLoopback = host == "127.0.0.1" || host == "::1"
    }

    public func write(_ bytes: UnsafeRawBufferPointer) {
        precondition(!isClosed, "write after close")
        output += bytes
        writeCount += 1
    }

    /// Everything written and not yet taken: a test that does not take
    /// the output plays a client that does not read.
    public var queuedByteCount: Int { output.count }
    public func close() { isClosed = true }
    public func abort() { isClosed = true }
    public func pauseReading() { isReadingPaused = true }
    public func resumeReading() { isReadingPaused = false }

    /// Returns and forgets what was written so far.
    public func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }
}
