import Foundation
import Synchronization
import Testing
import XMPPCore
import XMPPNet
import XMPPServer
import XMPPTestSupport

/// A real `Server` for one test: a fresh temporary data directory,
/// listeners on `127.0.0.1:0` (and `[::1]:0` when IPv6 loopback works),
/// the server's own event loop and SQLite storage, the certificate it
/// generates on first run. The style guide's level 4: "a few live tests on
/// port 0".
///
/// Use `LiveServer.run { server in ... }`: it stops the server and removes
/// the directory afterwards, whatever the test did.
final class LiveServer {
    /// The longest `shutdown()` plus `waitUntilStopped()` may take; the
    /// server itself waits at most a second for goodbyes to be written.
    static let stopTimeout = DispatchTimeInterval.seconds(5)

    let server: Server
    /// The bound addresses, IPv4 first.
    let addresses: [SocketAddress]
    let dataDirectory: String
    /// `<data>/tls/localhost-ca.crt`, the root of the local CA that
    /// issued the server's certificate.
    let certificatePath: String
    /// Its PEM text, which clients trust as a root.
    let certificatePEM: String
    /// Everything the server logged, at debug level.
    let log = LogRecorder()
    private var clients: [LiveClient] = []

    private init(configure: (inout ServerConfig) -> Void) throws {
        dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-live-\(UUID().uuidString)").path
        var config = ServerConfig()
        config.dataDirectory = dataDirectory
        config.listen = [ListenAddress("127.0.0.1:0")!]
        if LiveSocket.ipv6LoopbackWorks { config.listen.append(ListenAddress("[::1]:0")!) }
        config.http.listen = [ListenAddress("127.0.0.1:0")!]
        config.http.tlsListen = []
        config.threads = TestThreads.count
        configure(&config)
        do {
            server = try Server(config: config, log: Logger(level: .debug, label: "live", sink: log))
            addresses = try server.start()
            guard case .generated(let certificate, _) = config.certificateSource else {
                throw TestFailure("expected a certificate the server made in the data directory")
            }
            guard let authority = server.localAuthority else {
                throw TestFailure("expected \(certificate) issued by the local CA")
            }
            certificatePath = authority.certificatePath
            certificatePEM = try String(contentsOfFile: certificatePath, encoding: .utf8)
        } catch {
            try? FileManager.default.removeItem(atPath: dataDirectory)
            throw error
        }
    }

    /// Starts a server, runs `body` with it, then stops it and deletes its
    /// data. An error thrown by `body` comes back with the server's log.
    /// - Parameter configure: Changes to the test configuration (listeners
    ///   on port 0 of loopback, a temporary data directory).
    static func run(
        configure: (inout ServerConfig) -> Void = { _ in }, _ body: (LiveServer) throws -> Void
    ) throws {
        let live = try LiveServer(configure: configure)
        defer { live.stop() }
        do {
            try body(live)
        } catch {
            throw TestFailure("\(error)\n--- server log ---\n\(live.log.lines.joined(separator: "\n"))")
        }
    }

    /// The IPv4 listener.
    var ipv4: SocketAddress { addresses.first { $0.family == .ipv4 }! }
    /// The IPv6 listener, if IPv6 loopback works here.
    var ipv6: SocketAddress? { addresses.first { $0.family == .ipv6 } }

    // MARK: - Clients

    /// A new connection, nothing sent yet; closed at the end of the test.
    func connect(to address: SocketAddress? = nil) throws -> LiveClient {
        let client = try LiveClient(connectingTo: address ?? ipv4, domain: "localhost")
        clients.append(client)
        return client
    }

    /// A new connection with an open stream secured by STARTTLS.
    func connectWithTLS(to address: SocketAddress? = nil) throws -> LiveClient {
        let client = try connect(to: address)
        try client.openStream()
        try client.startTLS(trusting: certificatePEM)
        return client
    }

    /// A client logged in over STARTTLS with SCRAM-SHA-256, bound to `resource`.
    func loggedInClient(_ username: String, _ password: String, resource: String = "live") throws -> LiveClient {
        let client = try connectWithTLS()
        try client.login(username, password, resource: resource)
        return client
    }

    /// Registers an account over STARTTLS, on a connection of its own.
    func register(_ username: String, _ password: String) throws {
        let client = try connectWithTLS()
        try client.register(username, password)
        try client.close()
    }

    // MARK: - Waiting

    /// Waits until a log line contains `text`, for at most `timeout`.
    /// - Throws: `TestFailure` if none does by then.
    func waitForLog(containing text: String, timeout: Duration = LiveClient.timeout) throws {
        let deadline = ContinuousClock.now + timeout
        while !log.lines.contains(where: { $0.contains(text) }) {
            guard ContinuousClock.now < deadline else { throw TestFailure("no log line contains '\(text)'") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    // MARK: - Stopping

    /// Closes clients still open (so the server has no goodbyes to wait
    /// for), shuts the server down within `stopTimeout`, deletes the data.
    private func stop() {
        for client in clients where client.isOpen {
            // Best effort: a failure here says nothing about the test.
            _ = try? client.close()
        }
        if !server.stop(within: Self.stopTimeout) {
            Issue.record("the server did not stop within \(Self.stopTimeout)")
        }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}

/// Collects the server's log lines; written from the server's threads,
/// read from the test's.
final class LogRecorder: LogSink {
    private let storage = Mutex<[String]>([])

    /// Every line so far.
    var lines: [String] { storage.withLock { $0 } }

    func write(line: String) {
        storage.withLock { $0.append(line) }
    }
}
