import Foundation
import SQLiteKit
import Testing
import XMPPCore

@testable import XMPPServer

/// The OpenMetrics text the server writes: escaping, family layout,
/// histogram buckets, and the whole exposition's order and end.
@Suite struct OpenMetricsTextTests {
    @Test func labelValuesEscapeBackslashQuoteAndNewline() {
        var text = OpenMetricsText()
        text.family("t", .gauge, help: "a \\ b \"c\"\nd")
        text.sample("t", labels: [("v", "a\\b\"c\"\nd\r\ne")], 1)
        #expect(
            text.finish() == """
                # TYPE t gauge
                # HELP t a \\\\ b "c"\\nd
                t{v="a\\\\b\\"c\\"\\nd\r\\ne"} 1
                # EOF

                """)
    }

    @Test func aUnitComesWithTypeAndHelp() {
        var text = OpenMetricsText()
        text.family("x_bytes", .counter, unit: "bytes", help: "Bytes.")
        text.sample("x_bytes_total", 5)
        #expect(
            text.finish()
                == "# TYPE x_bytes counter\n# UNIT x_bytes bytes\n# HELP x_bytes Bytes.\nx_bytes_total 5\n# EOF\n")
    }

    @Test func secondsAreExactDecimals() {
        #expect(OpenMetricsText.seconds(nanoseconds: 0) == "0")
        #expect(OpenMetricsText.seconds(nanoseconds: 5_000) == "0.000005")
        #expect(OpenMetricsText.seconds(nanoseconds: 250_000_000) == "0.25")
        #expect(OpenMetricsText.seconds(nanoseconds: 2_000_000_000) == "2")
        #expect(OpenMetricsText.seconds(nanoseconds: 1_500_000_001) == "1.500000001")
        #expect(OpenMetricsText.seconds(nanoseconds: -1_000) == "-0.000001")
    }

    @Test func histogramBucketsIncludeTheirBoundAndAddUp() {
        var histogram = Histogram(bounds: [1_000, 10_000])
        for value: Int64 in [0, 1_000, 1_001, 10_000, 10_001, 50_000] { histogram.observe(nanoseconds: value) }
        #expect(histogram.counts == [2, 2, 2])
        #expect(histogram.count == 6)
        #expect(histogram.sum == 72_002)
        histogram.observe(.microseconds(3))
        var text = OpenMetricsText()
        text.family("h_seconds", .histogram, unit: "seconds", help: "H.")
        text.histogram("h_seconds", labels: [("k", "v")], histogram)
        let lines = text.finish().split(separator: "\n").dropFirst(3)
        #expect(
            Array(lines) == [
                #"h_seconds_bucket{k="v",le="0.000001"} 2"#, #"h_seconds_bucket{k="v",le="0.00001"} 5"#,
                #"h_seconds_bucket{k="v",le="+Inf"} 7"#, #"h_seconds_count{k="v"} 7"#,
                #"h_seconds_sum{k="v"} 0.000075002"#, "# EOF",
            ])
    }

    @Test func loginMechanismsAreTheOfferedOnesOrOther() {
        #expect(LoginMechanism("SCRAM-SHA-256").labels[0].1 == "SCRAM-SHA-256")
        #expect(LoginMechanism("HT-SHA-256-NONE").labels[0].1 == "HT-SHA-256-NONE")
        #expect(LoginMechanism("X-MADE-UP").labels[0].1 == "other")
        #expect(LoginMechanism("other").slot == LoginMechanism(nil).slot)
        #expect(LoginMechanism.allCases.map(\.slot) == Array(0..<LoginMechanism.allCases.count))
        #expect(LimitKind.allCases.map(\.slot) == Array(0..<LimitKind.allCases.count))
        #expect(Stanza.Kind.allCases.map(\.slot) == [0, 1, 2])
    }

    @Test func expositionListsFamiliesInOrderAndEndsWithEOF() {
        let metrics = ServerMetrics()
        metrics.stanzasReceived.increment(.message)
        metrics.stanzasReceived.increment(.message)
        metrics.stanzasSent.increment(.iq)
        metrics.logins.increment(LoginMechanism("PLAIN"))
        metrics.loginFailures.increment(LoginMechanism("nonsense"))
        metrics.limitsHit.increment(.maxStanzaSize)
        metrics.uploadBytesReceived = 1234
        metrics.routingDuration.observe(.microseconds(7))
        var snapshot = MetricsSnapshot(uptime: .seconds(90))
        snapshot.sessions[.init(webSocket: true, tls: true)] = 3
        snapshot.storage.latencyCounts[0] = 4
        snapshot.offlineMessages = 2
        let text = metrics.exposition(snapshot)
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        #expect(
            types == [
                "swiftlet_sessions", "swiftlet_logins", "swiftlet_login_failures", "swiftlet_stanzas_received",
                "swiftlet_stanzas_sent", "swiftlet_routing_duration_seconds", "swiftlet_storage_queue_depth",
                "swiftlet_storage_job_duration_seconds", "swiftlet_offline_messages", "swiftlet_upload_received_bytes",
                "swiftlet_websocket_connections", "swiftlet_limits_hit", "swiftlet_uptime_seconds",
                "process_start_time_seconds",
            ])
        for line in [
            #"swiftlet_sessions{transport="websocket",tls="yes"} 3"#, #"swiftlet_sessions{transport="tcp",tls="no"} 0"#,
            #"swiftlet_logins_total{mechanism="PLAIN"} 1"#, #"swiftlet_login_failures_total{mechanism="other"} 1"#,
            #"swiftlet_stanzas_received_total{kind="message"} 2"#, #"swiftlet_stanzas_sent_total{kind="iq"} 1"#,
            #"swiftlet_routing_duration_seconds_bucket{le="0.000005"} 0"#,
            #"swiftlet_routing_duration_seconds_bucket{le="0.00001"} 1"#,
            #"swiftlet_storage_job_duration_seconds_count 4"#, "swiftlet_offline_messages 2",
            "swiftlet_upload_received_bytes_total 1234", #"swiftlet_limits_hit_total{limit="max_stanza_size"} 1"#,
            "swiftlet_uptime_seconds 90",
        ] {
            #expect(text.contains("\n" + line + "\n"), "\(line) in\n\(text)")
        }
        #expect(!text.contains("swiftlet_archived_messages"), "a count storage could not give is left out")
        #expect(text.hasSuffix("\n# EOF\n"))
        #expect(text.components(separatedBy: "# EOF").count == 2)
    }
}
