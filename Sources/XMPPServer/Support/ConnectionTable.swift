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
    /// - Returns: Its key.
    func add(_ transport: TCPTransport) -> ObjectIdentifier {
        loop.assertInLoop()
        let id = ObjectIdentifier(transport)
        transports[id] = transport
        return id
    }

    /// Forgets the transport `add` returned `id` for.
    func remove(_ id: ObjectIdentifier) {
        loop.assertInLoop()
        transports[id] = nil
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
