import XMPPCore
import XMPPNet

/// The XMPP connections (clients and components) one loop serves, so
/// that shutting down can end each stream; touched only on that loop.
///
/// `@unchecked Sendable`: the server holds one per loop and posts work
/// that uses it to that loop; every member asserts it runs there.
final class ConnectionTable: @unchecked Sendable {
    let loop: EventLoop
    private var transports: [ObjectIdentifier: TCPTransport] = [:]

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Keeps `transport` until `remove(_:)`.
    func add(_ transport: TCPTransport) {
        loop.assertInLoop()
        transports[ObjectIdentifier(transport)] = transport
    }

    /// Forgets `transport`, if kept here.
    func remove(_ transport: TCPTransport) {
        loop.assertInLoop()
        transports[ObjectIdentifier(transport)] = nil
    }

    /// Ends every stream with `system-shutdown`.
    /// - Returns: How many connections were open.
    func failAll() -> Int {
        loop.assertInLoop()
        for transport in transports.values {
            transport.session?.fail(StreamError(.systemShutdown))
            (transport.delegate as? ComponentSession)?.fail(StreamError(.systemShutdown))
        }
        return transports.count
    }
}
