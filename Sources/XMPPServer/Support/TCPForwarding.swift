import XMPPNet

/// A TCP connection's handler that passes closing and flow control down to
/// the connection while it is open: the XMPP sessions' adapter and the HTTP
/// connections' adapter.
protocol TCPForwarding: AnyObject {
    /// The connection; weak, since the connection owns its handler.
    var connection: TCPConnection? { get }
}

extension TCPForwarding {
    /// The connection while it is open, nil once it closes or is closing.
    var openConnection: TCPConnection? { connection.flatMap { $0.isOpen ? $0 : nil } }

    /// Sends what is queued, then closes.
    func close() { openConnection?.close(afterFlush: true) }
    /// Stops delivering received bytes until `resumeReading()`.
    func pauseReading() { openConnection?.pauseReading() }
    /// Delivers received bytes again.
    func resumeReading() { openConnection?.resumeReading() }
}
