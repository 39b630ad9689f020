import Testing

@testable import XMPPServer

/// The keys `metrics` and `metrics_token`.
@Suite struct MetricsConfigTests {
    private func parse(_ text: String) throws -> ServerConfig {
        try ServerConfig.parse(text, fileName: "s.conf", overrides: [])
    }

    @Test func onWithAToken() throws {
        let config = try parse("metrics = yes\nmetrics_token = 0123456789abcdef+/._~-\n")
        #expect(config.http.metrics)
        #expect(config.http.metricsToken == "0123456789abcdef+/._~-")
    }

    @Test func aTokenMustBeLongAndOfTokenCharacters() throws {
        for token in ["short", "0123456789abcdef 01", "0123456789abcdef=", "0123456789abcdefé"] {
            let failure = try #require(throws: ConfigError.self) { try parse("metrics_token = \"\(token)\"\n") }
            #expect(failure.key == "metrics_token")
            #expect(!failure.description.contains(token), "the token is not repeated: \(failure)")
        }
    }

    @Test func metricsNeedAnHTTPListener() throws {
        let failure = try #require(throws: ConfigError.self) {
            try parse("metrics = yes\nupload = no\nhttp_listen =\nhttps_listen =\n")
        }
        #expect(failure.key == "metrics")
    }
}
