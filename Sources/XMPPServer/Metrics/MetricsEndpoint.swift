import SQLiteKit
import XMPPCore
import XMPPNet

/// `/metrics`: the server's metrics in the OpenMetrics text format, for
/// Prometheus and the like (key `metrics`, off by default).
///
/// | request | answer |
/// |---------|--------|
/// | `GET` from loopback, no `metrics_token` set | `200` |
/// | `GET` with `Authorization: Bearer` and the `metrics_token`, from anywhere | `200` |
/// | no `metrics_token` set, from another address | `403` |
/// | `metrics_token` set, the field missing or another token | `401` with `WWW-Authenticate: Bearer` |
/// | any other method | `405` |
///
/// Counts of stored messages come from a storage job run for each scrape;
/// each loop's counters and sessions are read on that loop and summed.
final class MetricsEndpoint: HTTPResponder {
    static let path = "/metrics"

    private let context: ServerContext
    /// Every loop's context, `context` among them.
    private let loops: [ServerContext]
    private let storage: any StorageJobs
    private let storageStatistics: () -> StorageQueueStatistics

    /// - Parameters:
    ///   - storage: Where the stored messages are counted.
    ///   - storageStatistics: Reads the storage queue's depth and latency.
    ///   - loops: Every loop's context, whose counters are summed; by
    ///     default `context`'s alone.
    init(
        context: ServerContext, loops: [ServerContext]? = nil, storage: any StorageJobs,
        storageStatistics: @escaping () -> StorageQueueStatistics
    ) {
        self.context = context
        self.loops = loops ?? [context]
        self.storage = storage
        self.storageStatistics = storageStatistics
    }

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        if let refusal = Self.refusal(request, peer: connection.peer, token: context.config.http.metricsToken) {
            context.log.info("/metrics from \(connection.peer) refused: \(refusal.text)")
            return connection.respond(refusal)
        }
        let context = context
        storage.run(on: context.loop, { stores in (try stores.offline.totalCount(), try stores.archive.totalCount()) })
        { [storageStatistics, self] result in
            var snapshot = MetricsSnapshot(storage: storageStatistics(), uptime: context.loop.now - context.started)
            switch result {
            case .success(let (offline, archived)):
                snapshot.offlineMessages = offline
                snapshot.archivedMessages = archived
            case .failure(let error):
                context.log.error("/metrics cannot count stored messages: \(error)")
            }
            gather { metrics, sessions in
                snapshot.sessions = sessions
                let body = Array(metrics.exposition(snapshot).utf8)
                connection.respond(
                    HTTPResponse(
                        .ok, fields: [("Content-Type", OpenMetricsText.contentType), ("Cache-Control", "no-store")],
                        body: body))
            }
        }
    }

    /// Reads every loop's counters and bound sessions on that loop, then
    /// calls `completion` on this endpoint's loop with their sums.
    private func gather(
        _ completion: @escaping (ServerMetrics, [MetricsSnapshot.SessionKind: Int]) -> Void
    ) {
        let total = ServerMetrics(startTime: context.metrics.startTime)
        var sessions: [MetricsSnapshot.SessionKind: Int] = [:]
        var missing = loops.count
        let back = LoopBound({ (counts: ServerMetrics.Counts, found: [MetricsSnapshot.SessionKind: Int]) in
            total.add(counts)
            sessions.merge(found, uniquingKeysWith: +)
            missing -= 1
            if missing == 0 { completion(total, sessions) }
        }, on: context.loop)
        for other in loops {
            // Read only on its own loop, where its sessions count into it.
            nonisolated(unsafe) let metrics = other.metrics
            let registry = other.sessions
            other.loop.execute {
                var found: [MetricsSnapshot.SessionKind: Int] = [:]
                for handle in registry.all {
                    guard let session = handle.sessionOnThisLoop else { continue }
                    found[MetricsSnapshot.SessionKind(webSocket: session.framing == .webSocket, tls: session.isSecure), default: 0] += 1
                }
                let (counts, sessions) = (metrics.counts, found)
                back.execute { $0(counts, sessions) }
            }
        }
    }

    /// Why `request` from `peer` gets no metrics, or nil when it may.
    ///
    /// Without `token`, only loopback peers (a local Prometheus or a
    /// reverse proxy that checks access itself) are served. With it,
    /// everyone must send it, compared in constant time: the SHA-256
    /// hashes are compared, so neither its bytes nor its length leak.
    static func refusal(_ request: HTTPRequestHead, peer: SocketAddress, token: String) -> HTTPRefusal? {
        guard request.method == "GET" else {
            return HTTPRefusal(.methodNotAllowed, "metrics are read with GET", fields: [("Allow", "GET")])
        }
        guard !token.isEmpty else {
            return peer.isLoopback ? nil : HTTPRefusal(.forbidden, "metrics are served to loopback only")
        }
        let sent = request[field: "authorization"].flatMap { value -> String? in
            let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
            return String(parts[1].drop { $0 == " " })
        }
        let hash = HashFunction.sha256
        guard let sent, Crypto.constantTimeEquals(hash.hash(Array(sent.utf8)), hash.hash(Array(token.utf8))) else {
            return HTTPRefusal(
                .unauthorized, "a bearer token is required", fields: [("WWW-Authenticate", "Bearer realm=\"metrics\"")])
        }
        return nil
    }
}
