import Foundation
import SQLiteKit
import Synchronization
import XMPPCore
import XMPPNet
import XMPPStorage

/// The running server: storage, certificate, `threads` event loops on
/// threads of their own, listeners, and a session per accepted connection.
///
/// The first loop runs the listeners (handing each accepted connection to
/// the loops in turn), the HTTP server, the control socket and the
/// server-wide timers; every loop has its own `ServerContext` over the
/// same shared parts, and its own table of the connections it serves.
///
/// `start()` binds the listeners (so a port-0 test server learns its
/// ports); `waitUntilStopped()` blocks until `shutdown()` (or SIGINT/SIGTERM
/// with `installSignalHandlers()`) has closed every stream.
public final class Server: @unchecked Sendable {
    // @unchecked: `listeners` and the other start-up state are touched only
    // on `loop`, each connection table only on its own loop (each use
    // asserts it); the limits and the id counter are synchronized; the
    // rest is immutable after `start`.
    public let config: ServerConfig
    public let log: Logger
    /// The first loop: listeners, HTTP, the control socket, timers.
    public let loop: EventLoop
    /// Every loop, `loop` first.
    let loops: [EventLoop]
    let storage: StorageQueue<Stores>
    /// The first loop's context.
    let context: ServerContext
    /// Each loop's context and table of connections, in the order of
    /// `loops`.
    private let homes: [SessionHomes.Home]
    private var listeners: [TCPListener] = []
    /// The HTTP server, once started (nil without HTTP listeners).
    private var httpServer: HTTPServer?
    /// HTTPS's TLS context: the certificate of `context.tlsContext`, with
    /// ALPN `http/1.1` instead of `xmpp-client`.
    private let httpsContext: TLSContext
    /// The HTTP (then HTTPS) listeners' bound addresses, once `start()`
    /// has returned; written on the loop before `start()` returns.
    public private(set) var httpAddresses: [SocketAddress] = []
    private var purgeTimer: EventLoop.Timer?
    /// The component listeners' bound addresses (XEP-0114), once `start()`
    /// has returned; written on the loop before `start()` returns.
    public private(set) var componentAddresses: [SocketAddress] = []
    /// Where the admin commands reach the running server; set on the loop
    /// by `start()`.
    private var controlSocket: ControlSocket?
    /// Counts the connections of every loop, in all and per address block.
    private let connectionLimits: Mutex<ConnectionLimits>
    private let nextID = Atomic<Int>(1)
    private var signalSources: [DispatchSourceSignal] = []
    private let stopped = DispatchSemaphore(value: 0)
    /// Set on the first loop once `shutdown()` has begun: a `start()` that
    /// comes after it (a signal during start-up) fails instead of listening.
    private var isShuttingDown = false
    /// The group chat rooms, for the admin page.
    private let rooms: MUCRooms?

    /// The local certificate authority that issued the certificate, when it did.
    public let localAuthority: LocalCertificateAuthority?

    /// Whether the web chat offers the demo accounts (`swiftletd demo`).
    private let webChatDemo: Bool

    /// Opens storage, loads or creates the certificate and the SCRAM
    /// secret, and creates the loop. Nothing listens yet.
    /// - Parameter webChatDemo: The server runs as `swiftletd demo`: the
    ///   web chat offers the demo accounts.
    public init(config: ServerConfig, log: Logger, webChatDemo: Bool = false) throws {
        self.webChatDemo = webChatDemo
        self.config = config
        self.log = log
        let fitting = ConnectionLimits.raiseOpenFileLimit(reserve: Self.reservedDescriptors)
        if fitting < config.limits.maxConnections {
            log.warning(
                "max_connections = \(config.limits.maxConnections) does not fit the open-file limit; "
                    + "using \(fitting)")
        }
        connectionLimits = Mutex(ConnectionLimits(
            maxTotal: min(config.limits.maxConnections, fitting), maxPerNetwork: config.limits.maxConnectionsPerNetwork))
        try FileManager.default.createDirectory(
            atPath: config.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        storage = try Storage.open(directory: config.dataDirectory)
        let certificate = try ServerCertificate.load(config, log: log)
        localAuthority = certificate.authority
        var tlsConfiguration = certificate.configuration
        var httpsConfiguration = tlsConfiguration
        httpsConfiguration.applicationProtocols = ["http/1.1"]
        httpsContext = try TLSContext(configuration: httpsConfiguration)
        if !config.directTLSListen.isEmpty {
            tlsConfiguration.applicationProtocols = [TLSConfiguration.xmppClientALPN]
        }
        let tlsContext = try TLSContext(configuration: tlsConfiguration)
        let policy = config.effectiveTLSPolicy
        log.notice("TLS \(policy); SCRAM without TLS: \(policy.allowsSCRAMWithoutTLS ? "yes" : "no"); PLAIN only over TLS")
        for warning in config.warnings { log.warning(warning) }
        loops = try (0..<config.threads).map { try EventLoop.start(name: "swiftlet.loop\($0)") }
        loop = loops[0]
        let features = Features.standard(config)
        rooms = features.lazy.compactMap { ($0 as? MultiUserChat)?.rooms }.first
        context = try ServerContext(
            config: config, loop: loop, log: log, tlsContext: tlsContext, tlsRequired: policy.requirement == .required,
            storage: storage,
            sessions: SessionRegistry(), blocklists: BlocklistCache(), hooks: Hooks(features),
            loginThrottle: LoginThrottle(
                perAddress: config.authentication.loginThrottle,
                perAccount: config.authentication.accountLoginThrottle),
            registrationThrottle: AddressThrottle(
                config.registration.throttle,
                exempt: AddressThrottle.exemptingLoopback(config.registration.throttleExemptsLoopback)),
            scramSecret: try Self.scramSecret(in: config.dataDirectory))
        let contexts = [context] + loops.dropFirst().map { [context] in ServerContext(sharing: context, on: $0) }
        homes = zip(contexts, loops.map(ConnectionTable.init(loop:))).map(SessionHomes.Home.init)
        context.homes.install(homes)
        log.notice("\(loops.count) event loop\(loops.count == 1 ? "" : "s")")
    }

    /// Binds every listener, on the loop.
    /// - Returns: The bound addresses, in config order (ports resolved).
    @discardableResult
    public func start() throws -> [SocketAddress] {
        let outcome = Mutex<Result<[SocketAddress], any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            guard !isShuttingDown else {
                outcome.withLock { $0 = .failure(ServerStartError("stopped by a signal while starting")) }
                done.signal()
                return
            }
            context.hooks.serverStarted(context)
            let result = Result {
                let addresses = try startListeners()
                controlSocket = try startControlSocket()
                return addresses
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    private func startListeners() throws -> [SocketAddress] {
        loop.assertInLoop()
        try startHTTP()
        var bound: [SocketAddress] = []
        let plain = config.listen.map { ($0, false) }
        let direct = config.directTLSListen.map { ($0, true) }
        for (address, directTLS) in plain + direct {
            do {
                let listener = try TCPListener(
                    address: address.socketAddress, connectionOptions: config.connectionOptions, on: loop,
                    distributingTo: loops
                ) { [unowned self] connection in
                    self.accept(connection, directTLS: directTLS)
                }
                listeners.append(listener)
                bound.append(listener.localAddress)
                log.notice("listening on \(listener.localAddress)\(directTLS ? " (direct TLS)" : "") for \(context.domain)")
            } catch {
                throw ServerStartError("cannot listen on \(address): \(error)")
            }
        }
        try startComponentListeners()
        let reach = ClientReach(
            config, listeners: bound, uploadBase: context.upload?.baseURL, authority: localAuthority)
        for line in reach.lines { log.notice(line) }
        return bound
    }

    /// Listens for external components (XEP-0114) on `component_listen`.
    private func startComponentListeners() throws {
        for address in config.components.listen {
            do {
                let listener = try TCPListener(
                    address: address.socketAddress, connectionOptions: config.connectionOptions, on: loop,
                    distributingTo: loops
                ) { [unowned self] connection in
                    self.acceptComponent(connection)
                }
                listeners.append(listener)
                componentAddresses.append(listener.localAddress)
                log.notice(
                    "listening on \(listener.localAddress) for components: \(config.componentDomains.joined(separator: ", "))")
            } catch {
                throw ServerStartError("cannot listen for components on \(address): \(error)")
            }
        }
    }

    /// Starts the HTTP server when an HTTP or HTTPS listener is set, with
    /// the routes of the features that are on; fixes the upload URLs' base
    /// to the bound ports and starts the hourly purge of uploads.
    private func startHTTP() throws {
        guard !config.http.listen.isEmpty || !config.http.tlsListen.isEmpty else { return }
        let routes = HTTPRoutes()
        if let upload = context.upload {
            try upload.files.prepare()
            routes.add("/upload/", UploadHTTPResponder(server: context, service: upload))
        }
        let hostMeta = HostMetaResponder()
        if config.http.webSocket {
            routes.add(WebSocketEndpoint.path, WebSocketEndpoint(context: context) { [unowned self] transport in
                context.metrics.webSocketsOpened += 1
                transport.session = ClientSession(server: context, transport: transport, id: takeID())
            })
            if config.http.webChat { WebChatResponder.mount(on: routes, context: context, demo: webChatDemo) }
            routes.add(HostMetaResponder.xmlPath, hostMeta)
            routes.add(HostMetaResponder.jsonPath, hostMeta)
        }
        if let localAuthority {
            let responder = try LocalCAResponder(authority: localAuthority)
            routes.add(LocalCAResponder.profilePath, responder)
            routes.add(LocalCAResponder.certificatePath, responder)
        }
        if config.http.metrics {
            let metrics = MetricsEndpoint(context: context, loops: homes.map(\.context), storage: storage) { [storage] in
                storage.statistics
            }
            routes.add(MetricsEndpoint.path, metrics)
        }
        if config.http.adminPage, !config.admins.isEmpty {
            let page = AdminPage(server: context, rooms: rooms)
            routes.add(AdminPage.path, page)
            routes.add(AdminPage.path + "/", page)
        }
        let http = HTTPServer(
            loop: loop, context: context, responder: routes, tlsContext: httpsContext,
            connectionLimits: connectionLimits.withLock {
                ConnectionLimits(maxTotal: $0.maxTotal, maxPerNetwork: $0.maxPerNetwork)
            })
        httpServer = http
        httpAddresses = try http.start(plain: config.http.listen, secure: config.http.tlsListen)
        log.notice("HTTP paths: \(routes.paths.joined(separator: " "))")
        let plainPorts = httpAddresses.prefix(config.http.listen.count).map(\.port)
        let securePorts = httpAddresses.dropFirst(config.http.listen.count).map(\.port)
        hostMeta.webSocketURLs =
            config.http.webSocketURL.isEmpty
            ? HostMetaResponder.webSocketURLs(domain: config.domain, secure: securePorts, plain: plainPorts)
            : [config.http.webSocketURL]
        guard let upload = context.upload else { return }
        let httpPort = plainPorts.first
        let httpsPort = securePorts.first
        upload.baseURL = config.effectiveUploadURL(httpPort: httpPort, httpsPort: httpsPort)?.url ?? ""
        log.notice("upload service \(config.uploadService): URLs \(upload.baseURL)/upload/…")
        purgeUploads()
    }

    /// Purges expired uploads now and every hour.
    private func purgeUploads() {
        guard let upload = context.upload else { return }
        upload.purge(storage: storage, log: log)
        purgeTimer = loop.schedule(after: .seconds(3600)) { [weak self] in self?.purgeUploads() }
    }

    /// Blocks until `shutdown()` has finished, then closes storage.
    public func waitUntilStopped() {
        stopped.wait()
        for loop in loops { loop.stopAndWait() }
        storage.shutdown()
        log.notice("stopped")
    }

    /// Ends every stream with `system-shutdown`, stops listening, and stops
    /// the loops once the goodbyes are written (at most a second later).
    /// Callable from any thread.
    public func shutdown() {
        loop.execute { [self] in
            isShuttingDown = true
            for listener in listeners { listener.close() }
            listeners = []
            controlSocket?.close()
            controlSocket = nil
            httpServer?.stop()
            purgeTimer?.cancel()
            // Each loop ends its own streams; the last to finish starts
            // the wait for the goodbyes, back on the first loop.
            let waiting = Mutex((loops: homes.count, streams: 0))
            for table in homes.map(\.connections) {
                table.loop.execute { [self] in
                    let ended = table.failAll()
                    let (last, streams) = waiting.withLock { state in
                        state.loops -= 1
                        state.streams += ended
                        return (state.loops == 0, state.streams)
                    }
                    guard last else { return }
                    loop.execute { [self] in
                        log.notice("shutting down: \(streams) connection(s)")
                        loop.schedule(after: .milliseconds(streams == 0 ? 0 : 1000)) { [self] in
                            context.hooks.serverStopping(context)
                            stopped.signal()
                        }
                    }
                }
            }
        }
    }

    /// Shuts down on SIGINT and SIGTERM. Called before `start()`, so that a
    /// signal sent once the listening lines are logged is never missed.
    public func installSignalHandlers() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [weak self] in self?.shutdown() }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Descriptors kept free of client connections: the database and its
    /// journal, listeners, HTTP connections, uploads being written, logs.
    static let reservedDescriptors = 256

    /// A fresh log label number for a connection.
    private func takeID() -> Int {
        nextID.add(1, ordering: .relaxed).oldValue
    }

    /// Takes a client's connection, on the loop it was handed to.
    private func accept(_ connection: TCPConnection, directTLS: Bool) {
        let (transport, refusal) = track(connection)
        let peer = connection.remoteAddress
        let context = home(of: connection).context
        let session = ClientSession(server: context, transport: transport, id: takeID(), directTLS: directTLS)
        transport.session = session
        switch refusal {
        case nil:
            break
        case .serverFull:
            context.metrics.limitsHit.increment(.maxConnections)
            session.refuse(StreamError(.resourceConstraint, text: "the server has all the connections it can take"))
        case .networkFull:
            context.metrics.limitsHit.increment(.maxConnectionsPerAddress)
            session.refuse(
                StreamError(
                    .policyViolation,
                    text: "too many connections from \(peer.addressBlock) (at most \(config.limits.maxConnectionsPerNetwork))"))
        }
    }

    /// Takes a component's connection (XEP-0114); one beyond the
    /// connection limits is closed at once.
    private func acceptComponent(_ connection: TCPConnection) {
        let (transport, refusal) = track(connection)
        let session = ComponentSession(server: home(of: connection).context, transport: transport, id: takeID())
        transport.delegate = session
        if refusal != nil {
            session.fail(StreamError(.resourceConstraint, text: "the server has all the connections it can take"))
        }
    }

    /// Wraps an accepted connection, counts it against the connection
    /// limits and keeps it until it closes.
    /// - Returns: The transport, and why it must be refused, if it must.
    private func track(_ connection: TCPConnection) -> (TCPTransport, ConnectionLimits.Refusal?) {
        let peer = connection.remoteAddress
        let refusal = connectionLimits.withLock { $0.admit(peer) }
        let transport = TCPTransport(connection)
        home(of: connection).connections.add(transport)
        transport.onClose = { [unowned self, unowned transport] in
            // The connection may have moved to another loop since (a
            // session moving to its account's: `SessionHomes`); it is
            // still there while it tells of its close.
            if let connection = transport.connection { home(of: connection).connections.remove(transport) }
            if refusal == nil { self.connectionLimits.withLock { $0.release(peer) } }
        }
        return (transport, refusal)
    }

    /// The context and connection table of the loop `connection` is on.
    private func home(of connection: TCPConnection) -> SessionHomes.Home {
        guard let home = homes.first(where: { $0.connections.loop === connection.loop }) else {
            preconditionFailure("a connection on a loop of no server")
        }
        return home
    }

    // MARK: - Start-up files

    /// The per-server secret SCRAM derives unknown users' fake salts from:
    /// 32 random bytes in `<data>/scram-secret` (mode 0600), made once so
    /// that a probe sees the same salt across restarts.
    private static func scramSecret(in directory: String) throws -> [UInt8] {
        let path = directory + "/scram-secret"
        if let existing = FileManager.default.contents(atPath: path), existing.count == 32 {
            return Array(existing)
        }
        let secret = Crypto.randomBytes(count: 32)
        guard FileManager.default.createFile(atPath: path, contents: Data(secret), attributes: [.posixPermissions: 0o600])
        else { throw ServerStartError("cannot write \(path)") }
        return secret
    }
}

/// Why the server could not start.
public struct ServerStartError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
