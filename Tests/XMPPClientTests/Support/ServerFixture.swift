import Foundation
import Testing
import Synchronization
@testable import XMPPClient
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
        config.http.tlsListen = []
        config.threads = TestThreads.count
        configure(&config)
        do {
            server = try Server(config: config, log: Logger(level: .warning, label: "fixture", sink: NoLog()))
            address = try server.start()[0]
            guard case .generated(let certificate, _) = config.certificateSource else {
                throw TestFailure("expected a certificate the server made")
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

    /// Whether `jid`'s session holds contacts' presence back for its
    /// inactive client (XEP-0352); asked on the session's loop, after what
    /// was queued there before.
    func holdsPresence(for jid: JID) async -> Bool {
        guard let handle = server.context.sessions.session(jid) else { return false }
        return await withCheckedContinuation { answer in
            handle.withSession { answer.resume(returning: !$0.state[ClientStateIndication.Held.self].isEmpty) }
        }
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

/// Everything one client published, for tests to wait on. Events are
/// recorded in the client's own turn, so when a call to the client returns,
/// what it published is in `all`: a test can check that something did not
/// happen without waiting to see.
final class EventRecorder: Sendable {
    private final class Storage: Sendable {
        /// The events so far, and a signal for each wait in `first`.
        let state = Mutex<(events: [ClientEvent], next: Int, watchers: [Int: AsyncStream<Void>.Continuation])>(
            ([], 0, [:]))

        func record(_ event: ClientEvent) {
            let watchers = state.withLock { state in
                state.events.append(event)
                return Array(state.watchers.values)
            }
            for watcher in watchers { watcher.yield() }
        }
    }

    private let storage = Storage()
    private let broadcaster: EventBroadcaster
    private let subscription: Int

    init(_ client: XMPPClient) {
        let storage = self.storage
        broadcaster = client.broadcaster
        subscription = broadcaster.subscribe { storage.record($0) }
    }

    deinit { broadcaster.unsubscribe(subscription) }

    /// Every event so far.
    var all: [ClientEvent] { storage.state.withLock { $0.events } }

    /// The first event (of all so far) that `match` accepts, waiting for
    /// one as long as it takes: no deadline that a busy machine could miss.
    /// A wait for an event that never comes ends with the test's time limit.
    @discardableResult
    func first<T>(_ what: String, _ match: (ClientEvent) -> T?) async throws -> T {
        let (changes, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = storage.state.withLock { state in
            state.next += 1
            state.watchers[state.next] = signal
            return state.next
        }
        defer { _ = storage.state.withLock { $0.watchers.removeValue(forKey: id) } }
        var iterator = changes.makeAsyncIterator()
        repeat {
            if let found = all.lazy.compactMap(match).first { return found }
        } while await iterator.next() != nil
        throw TestFailure("no \(what) before the test was cancelled; events: \(all)")
    }
}
