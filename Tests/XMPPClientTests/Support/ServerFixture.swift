import Foundation
import Testing
import Synchronization
import XMPPClient
import XMPPCore
import XMPPNet
@testable import XMPPServer
import XMPPTestSupport

/// A real swiftletd `Server` in this process for one test: a temporary data
/// directory, a listener on `127.0.0.1:0`, its own self-signed certificate,
/// which clients pin by fingerprint.
final class ServerFixture: ClientTestServer, Sendable {
    let server: Server
    let address: SocketAddress
    let dataDirectory: String
    let fingerprint: CertificateFingerprint

    private init(configure: (inout ServerConfig) -> Void) throws {
        dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-client-\(UUID().uuidString)").path
        var config = ServerConfig()
        config.dataDirectory = dataDirectory
        config.listen = [ListenAddress("127.0.0.1:0")!]
        config.http.listen = [ListenAddress("127.0.0.1:0")!]
        configure(&config)
        do {
            server = try Server(config: config, log: Logger(level: .warning, label: "fixture", sink: NoLog()))
            address = try server.start()[0]
            guard case .selfSigned(let certificate, _) = config.certificateSource else {
                throw TestFailure("expected a self-signed certificate")
            }
            fingerprint = try CertificateFingerprint(
                certificatePEM: try String(contentsOfFile: certificate, encoding: .utf8))
        } catch {
            try? FileManager.default.removeItem(atPath: dataDirectory)
            throw error
        }
    }

    /// Starts a server, runs `body`, then stops the server and deletes its data.
    static func run(
        configure: (inout ServerConfig) -> Void = { _ in }, _ body: (ServerFixture) async throws -> Void
    ) async throws {
        let fixture = try ServerFixture(configure: configure)
        defer { fixture.stop() }
        try await body(fixture)
    }

    func clientConfiguration(user: String, password: String, resource: String?) -> ClientConfiguration {
        testConfiguration(
            user, password: password, resource: resource, host: address.ipString, port: address.port,
            fingerprint: fingerprint)
    }

    /// Cuts the TCP connection of `jid`'s session from the server's side,
    /// as a network drop would, without a stream error or closing tag.
    func dropConnection(of jid: JID) {
        server.context.sessions.session(jid)?.withSession { $0.closeTransport() }
    }

    private func stop() {
        if !server.stop(within: .seconds(5)) {
            Issue.record("the server did not stop within 5 s")
        }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}

/// Discards the fixture server's log.
private struct NoLog: LogSink {
    func write(line: String) {}
}

/// Everything one client published, for tests to wait on.
final class EventRecorder: Sendable {
    private final class Storage: Sendable {
        let events = Mutex<[ClientEvent]>([])
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ client: XMPPClient) {
        let stream = client.events()
        let storage = self.storage
        task = Task { for await event in stream { storage.events.withLock { $0.append(event) } } }
    }

    deinit { task.cancel() }

    /// Every event so far.
    var all: [ClientEvent] { storage.events.withLock { $0 } }

    /// The first event (of all so far) that `match` accepts, waiting up to
    /// `timeout` for one.
    @discardableResult
    func first<T>(
        timeout: Duration = .seconds(5), _ what: String, _ match: (ClientEvent) -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let found = all.lazy.compactMap(match).first { return found }
            guard ContinuousClock.now < deadline else {
                throw TestFailure("no \(what) within \(timeout); events: \(all)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
