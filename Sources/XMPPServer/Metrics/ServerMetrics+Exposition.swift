import SQLiteKit
import XMPPCore

/// What `/metrics` reads when scraped rather than counting as it goes.
struct MetricsSnapshot {
    /// Bound sessions (detached ones waiting for resumption included), by
    /// whether they run over a WebSocket and whether they are encrypted.
    var sessions: [SessionKind: Int] = [:]
    /// The storage thread's queue.
    var storage = StorageQueueStatistics()
    /// Messages waiting in offline storage; nil when storage failed.
    var offlineMessages: Int?
    /// Messages in the users' archives (MAM); nil when storage failed.
    var archivedMessages: Int?
    /// How long the server has been running.
    var uptime = Duration.zero

    /// A session's transport and encryption, the labels of
    /// `swiftlet_sessions`.
    struct SessionKind: Hashable, CaseIterable {
        var webSocket: Bool
        var tls: Bool

        static let allCases = [false, true].flatMap { webSocket in
            [false, true].map { SessionKind(webSocket: webSocket, tls: $0) }
        }

        var labels: [(String, String)] { [("transport", webSocket ? "websocket" : "tcp"), ("tls", tls ? "yes" : "no")] }
    }
}

extension ServerMetrics {
    /// The exposition of every metric, in OpenMetrics text: the counters
    /// kept here and what `snapshot` read.
    func exposition(_ snapshot: MetricsSnapshot) -> String {
        var text = OpenMetricsText()
        text.family("swiftlet_sessions", .gauge, help: "Bound client sessions, by transport and encryption.")
        for kind in MetricsSnapshot.SessionKind.allCases {
            text.sample("swiftlet_sessions", labels: kind.labels, snapshot.sessions[kind] ?? 0)
        }
        counter(&text, "swiftlet_logins", logins, help: "Successful logins, by SASL mechanism.")
        counter(&text, "swiftlet_login_failures", loginFailures, help: "Failed SASL exchanges, by mechanism.")
        counter(&text, "swiftlet_stanzas_received", stanzasReceived, help: "Stanzas from bound clients, by kind.")
        counter(&text, "swiftlet_stanzas_sent", stanzasSent, help: "Stanzas written to clients, by kind.")
        text.family(
            "swiftlet_routing_duration_seconds", .histogram, unit: "seconds",
            help: "Time from a stanza's arrival at the router until it is delivered, answered or handed to storage.")
        text.histogram("swiftlet_routing_duration_seconds", routingDuration)
        text.family("swiftlet_storage_queue_depth", .gauge, help: "Storage jobs submitted and not finished.")
        text.sample("swiftlet_storage_queue_depth", snapshot.storage.depth)
        text.family(
            "swiftlet_storage_job_duration_seconds", .histogram, unit: "seconds",
            help: "Time from a storage job's submission until it has run, waiting included.")
        text.histogram(
            "swiftlet_storage_job_duration_seconds",
            Histogram(
                bounds: StorageQueueStatistics.latencyBounds, counts: snapshot.storage.latencyCounts,
                sum: snapshot.storage.latencySum))
        if let offline = snapshot.offlineMessages {
            text.family("swiftlet_offline_messages", .gauge, help: "Messages waiting in offline storage.")
            text.sample("swiftlet_offline_messages", offline)
        }
        if let archived = snapshot.archivedMessages {
            text.family("swiftlet_archived_messages", .gauge, help: "Messages in the users' archives (MAM).")
            text.sample("swiftlet_archived_messages", archived)
        }
        text.family(
            "swiftlet_upload_received_bytes", .counter, unit: "bytes", help: "Bytes of file uploads received.")
        text.sample("swiftlet_upload_received_bytes_total", uploadBytesReceived)
        text.family("swiftlet_websocket_connections", .counter, help: "WebSocket connections opened.")
        text.sample("swiftlet_websocket_connections_total", webSocketsOpened)
        counter(&text, "swiftlet_limits_hit", limitsHit, help: "Times a limit refused or ended something, by key.")
        text.family("swiftlet_uptime_seconds", .gauge, unit: "seconds", help: "Time since the server started.")
        text.sample("swiftlet_uptime_seconds", OpenMetricsText.seconds(nanoseconds: snapshot.uptime.nanoseconds))
        text.family(
            "process_start_time_seconds", .gauge, unit: "seconds", help: "When the server started, in Unix time.")
        text.sample(
            "process_start_time_seconds",
            OpenMetricsText.seconds(nanoseconds: Int64(startTime.timeIntervalSince1970 * 1000) * 1_000_000))
        return text.finish()
    }

    /// A counter family with a sample per label value.
    private func counter<Label>(
        _ text: inout OpenMetricsText, _ name: String, _ counter: LabelledCounter<Label>, help: String
    ) {
        text.family(name, .counter, help: help)
        for (labels, count) in counter.samples { text.sample(name + "_total", labels: labels, count) }
    }
}
