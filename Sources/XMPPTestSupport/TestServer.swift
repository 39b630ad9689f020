import XMPPCore
import XMPPNet
import XMPPServer

/// A whole server on a manual loop with in-memory storage: sessions over
/// in-memory transports, real TLS (a fresh self-signed certificate), no
/// sockets, no threads.
public final class TestServer {
    public let loop = ManualLoop()
    public let context: ServerContext
    /// The certificate STARTTLS presents.
    public let certificate: SelfSignedCertificate
    private let log: Logger
    private var nextID = 1

    /// Creates a server for `config` (default: `localhost`, TLS optional,
    /// registration open, features of `Features.standard`) whose wall clock
    /// is `clock`, and runs its start hooks. Log lines go to `logLines`.
    /// Storage jobs run on what `storage` makes for the server's loop
    /// (default: `InlineStorage`), which a test may wrap to make them fail.
    /// `extraFeatures` are installed after the standard ones, for tests of
    /// the hooks themselves.
    public init(
        config: ServerConfig = ServerConfig(), tlsRequired: Bool = false, clock: WallClock = .system,
        storage: (ManualLoop) -> any StorageJobs = { InlineStorage(loop: $0) },
        extraFeatures: [any ServerFeature] = []
    ) throws {
        let lines = LogLines()
        logLines = lines
        log = Logger(level: .debug, label: "test", sink: lines)
        certificate = try SelfSignedCertificate.generate(domain: config.domain)
        let tls = try TLSContext(
            configuration: .server(
                certificate: .pem(certificateChain: certificate.certificatePEM, privateKey: certificate.privateKeyPEM)))
        context = try ServerContext(
            config: config, loop: loop, log: log, tlsContext: tls, tlsRequired: tlsRequired,
            storage: storage(loop),
            sessions: SessionRegistry(), blocklists: BlocklistCache(), hooks: Hooks(Features.standard(config, clock: clock) + extraFeatures),
            loginThrottle: LoginThrottle(
                perAddress: config.authentication.loginThrottle,
                perAccount: config.authentication.accountLoginThrottle),
            registrationThrottle: AddressThrottle(
                config.registration.throttle,
                exempt: AddressThrottle.exemptingLoopback(config.registration.throttleExemptsLoopback)),
            scramSecret: Array(repeating: 7, count: 32), wallClock: clock)
        context.hooks.serverStarted(context)
        loop.run()
    }

    /// Every log line written so far.
    public let logLines: LogLines

    /// Opens a connection from `host` (a loopback address by default);
    /// with `directTLS`, to a XEP-0368 listener where TLS starts at once.
    public func connect(from host: String = "127.0.0.1", directTLS: Bool = false) -> TestClient {
        defer { nextID += 1 }
        return TestClient(server: self, host: host, id: nextID, directTLS: directTLS)
    }

    /// Creates an account directly in storage.
    public func addUser(_ username: String, password: String) throws {
        var outcome: Result<Bool, any Error>?
        context.accounts.register(username: username, password: password, on: loop) { outcome = $0 }
        loop.run()
        guard try outcome?.get() == true else { throw TestFailure("could not create \(username)") }
    }
}

/// Collects log lines for assertions.
public final class LogLines: LogSink, @unchecked Sendable {
    // @unchecked: tests write and read it from their one thread.
    public private(set) var lines: [String] = []
    public func write(line: String) { lines.append(line) }
}

/// A failure of the test harness itself.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
