import XMPPCore
import XMPPNet

/// The built-in HTTP server: listeners for plain HTTP and HTTPS on the
/// server's event loop, an `HTTPConnection` per accepted connection, all
/// answered by one responder (`HTTPRoutes`, which hands each path to its
/// feature). A connection upgraded to a WebSocket stays counted here until
/// it closes.
///
/// Confined to the loop.
final class HTTPServer {
    private let loop: EventLoop
    private let context: ServerContext
    private let responder: any HTTPResponder
    /// HTTPS's own context: the server's certificate, ALPN `http/1.1`.
    private let tlsContext: TLSContext?
    private var listeners: [TCPListener] = []
    private var connections: [ObjectIdentifier: TCPTransport] = [:]
    /// Counts `connections`, apart from the XMPP ones but with the same
    /// limits; a connection past them is closed at once.
    private var connectionLimits: ConnectionLimits
    private var nextID = 1

    init(
        loop: EventLoop, context: ServerContext, responder: any HTTPResponder, tlsContext: TLSContext?,
        connectionLimits: ConnectionLimits
    ) {
        self.connectionLimits = connectionLimits
        self.loop = loop
        self.context = context
        self.responder = responder
        self.tlsContext = tlsContext
    }

    /// Binds every listener.
    /// - Returns: The bound addresses, plain ones first, in config order.
    /// - Throws: `ServerStartError` naming the address that failed.
    func start(plain: [ListenAddress], secure: [ListenAddress]) throws -> [SocketAddress] {
        loop.assertInLoop()
        var bound: [SocketAddress] = []
        for (address, isSecure) in plain.map({ ($0, false) }) + secure.map({ ($0, true) }) {
            do {
                let listener = try TCPListener(
                    address: address.socketAddress, connectionOptions: context.config.connectionOptions, on: loop
                ) { [unowned self] connection in
                    self.accept(connection, secure: isSecure)
                }
                listeners.append(listener)
                bound.append(listener.localAddress)
                // Not "listening on": tools wait for that line to learn the XMPP port.
                context.log.notice("HTTP\(isSecure ? "S" : "") on \(listener.localAddress)")
            } catch {
                throw ServerStartError("cannot listen on \(address) for HTTP: \(error)")
            }
        }
        return bound
    }

    /// Stops listening and closes every connection.
    func stop() {
        loop.assertInLoop()
        for listener in listeners { listener.close() }
        listeners = []
        for transport in connections.values {
            switch transport.delegate {
            case let http as HTTPConnection: http.close()
            case let webSocket as WebSocketTransport: webSocket.session?.fail(StreamError(.systemShutdown))
            default: transport.close()
            }
        }
    }

    private func accept(_ connection: TCPConnection, secure: Bool) {
        let peer = connection.remoteAddress
        if let refusal = connectionLimits.admit(peer) {
            context.log.notice("HTTP connection from \(peer) refused: \(refusal)")
            return connection.close()
        }
        let transport = TCPTransport(connection)
        let id = ObjectIdentifier(transport)
        transport.onClose = { [unowned self] in
            self.connections[id] = nil
            self.connectionLimits.release(peer)
        }
        connections[id] = transport
        let log = context.log.labelled("http#\(nextID) \(connection.remoteAddress)")
        nextID += 1
        transport.delegate = HTTPConnection(
            transport: transport, peer: peer, loop: context.loop, responder: responder,
            tls: secure ? tlsContext.map(TLSSession.init(context:)) : nil, timeout: context.config.http.timeout, log: log)
    }
}
