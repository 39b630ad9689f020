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
/// Counts of stored messages come from a storage job run for each scrape.
final class MetricsEndpoint: HTTPResponder {
    static let path = "/metrics"

    private let context: ServerContext
    private let storage: any StorageJobs
    private let storageStatistics: () -> StorageQueueStatistics

    /// - Parameters:
    ///   - storage: Where the stored messages are counted.
    ///   - storageStatistics: Reads the storage queue's depth and latency.
    init(
        context: ServerContext, storage: any StorageJobs,
        storageStatistics: @escaping () -> StorageQueueStatistics
    ) {
        self.context = context
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
        { [storageStatistics] result in
            var snapshot = MetricsSnapshot(storage: storageStatistics(), uptime: context.loop.now - context.started)
            switch result {
            case .success(let (offline, archived)):
                snapshot.offlineMessages = offline
                snapshot.archivedMessages = archived
            case .failure(let error):
                context.log.error("/metrics cannot count stored messages: \(error)")
            }
            for handle in context.sessions.all {
                guard let session = handle.sessionOnThisLoop else { continue }
                let kind = MetricsSnapshot.SessionKind(webSocket: session.framing == .webSocket, tls: session.isSecure)
                snapshot.sessions[kind, default: 0] += 1
            }
            let body = Array(context.metrics.exposition(snapshot).utf8)
            connection.respond(
                HTTPResponse(
                    .ok, fields: [("Content-Type", OpenMetricsText.contentType), ("Cache-Control", "no-store")],
                    body: body))
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
