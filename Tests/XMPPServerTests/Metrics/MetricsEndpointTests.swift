import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// Who may read `/metrics`: loopback without a token, everyone with it;
/// and that nothing is served there unless `metrics` is on.
@Suite struct MetricsEndpointTests {
    private static let token = "0123456789abcdef0123"
    private static let loopback = SocketAddress(ip: "127.0.0.1", port: 40000)!
    private static let remote = SocketAddress(ip: "192.0.2.7", port: 40000)!

    private static func get(_ fields: [(name: String, value: String)] = [], method: String = "GET") -> HTTPRequestHead {
        HTTPRequestHead(method: method, target: "/metrics", minorVersion: 1, fields: [("Host", "localhost")] + fields)
    }

    @Test func withoutATokenOnlyLoopbackIsServed() {
        #expect(MetricsEndpoint.refusal(Self.get(), peer: Self.loopback, token: "") == nil)
        #expect(MetricsEndpoint.refusal(Self.get(), peer: SocketAddress(ip: "::1", port: 1)!, token: "") == nil)
        #expect(MetricsEndpoint.refusal(Self.get(), peer: Self.remote, token: "")?.status == .forbidden)
        let bearer = Self.get([("Authorization", "Bearer anything")])
        #expect(MetricsEndpoint.refusal(bearer, peer: Self.remote, token: "")?.status == .forbidden)
    }

    @Test func withATokenEveryoneMustSendIt() {
        for peer in [Self.loopback, Self.remote] {
            for value in ["Bearer \(Self.token)", "bearer  \(Self.token)"] {
                #expect(MetricsEndpoint.refusal(Self.get([("Authorization", value)]), peer: peer, token: Self.token) == nil)
            }
            for fields in [
                [], [("Authorization", "Bearer \(Self.token)x")],
                [("Authorization", "Bearer \(Self.token.dropLast())")],
                [("Authorization", "Basic \(Self.token)")], [("Authorization", Self.token)],
                [("Authorization", "Bearer \(Self.token)"), ("Authorization", "Bearer \(Self.token)")],
            ] as [[(name: String, value: String)]] {
                let refusal = MetricsEndpoint.refusal(Self.get(fields), peer: peer, token: Self.token)
                #expect(refusal?.status == .unauthorized, "\(fields)")
                #expect(refusal?.fields.contains { $0.name == "WWW-Authenticate" } == true)
            }
        }
    }

    @Test func onlyGET() {
        let post = MetricsEndpoint.refusal(Self.get(method: "POST"), peer: Self.loopback, token: "")
        #expect(post?.status == .methodNotAllowed)
    }

    @Test func offByDefault() throws {
        #expect(ServerConfig().http.metrics == false)
        #expect(ServerConfig().http.metricsToken == "")
        try LiveServer.run { server in
            let response = try LiveHTTPClient.exchange(server.server.httpAddresses[0], "GET", "/metrics")
            #expect(response.status == 404)
        }
    }

    @Test func servesCountsToTheTokenOnly() throws {
        try LiveServer.run(configure: {
            $0.http.metrics = true
            $0.http.metricsToken = Self.token
        }) { server in
            let http = server.server.httpAddresses[0]
            #expect(try LiveHTTPClient.exchange(http, "GET", "/metrics").status == 401)
            try server.register("alice", "secret")
            let alice = try server.loggedInClient("alice", "secret")
            let wrong = try server.connectWithTLS()
            #expect(try wrong.authenticate("alice", "wrong", mechanism: .scramSHA256).name == "failure")
            try alice.ping()
            let flooder = try server.connect()
            try flooder.openStream()
            try flooder.send("<iq type='get' id='big'>" + String(repeating: "x", count: 20 << 10) + "</iq>")
            _ = try flooder.readUntilClosed()
            try alice.send("<message to='alice@localhost/live' id='m1'><body>note to self</body></message>")
            #expect(try alice.nextElement()[attribute: "id"] == "m1")
            let response = try LiveHTTPClient.exchange(
                http, "GET", "/metrics", fields: [("Authorization", "Bearer \(Self.token)")])
            #expect(response.status == 200)
            #expect(
                response.fields["content-type"] == "application/openmetrics-text; version=1.0.0; charset=utf-8")
            let text = String(decoding: response.body, as: UTF8.self)
            for line in [
                #"swiftlet_sessions{transport="tcp",tls="yes"} 1"#,
                #"swiftlet_logins_total{mechanism="SCRAM-SHA-256"} 1"#,
                #"swiftlet_login_failures_total{mechanism="SCRAM-SHA-256"} 1"#,
                #"swiftlet_stanzas_received_total{kind="message"} 1"#,
                #"swiftlet_stanzas_received_total{kind="iq"} 1"#,
                #"swiftlet_routing_duration_seconds_count 2"#,
                #"swiftlet_limits_hit_total{limit="max_stanza_size"} 1"#,
                #"swiftlet_limits_hit_total{limit="max_queued_output"} 0"#,
            ] {
                #expect(text.contains("\n" + line + "\n"), "\(line) in\n\(text)")
            }
            #expect(text.hasSuffix("\n# EOF\n"))
        }
    }
}
