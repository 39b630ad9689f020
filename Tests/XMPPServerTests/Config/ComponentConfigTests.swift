import Testing

@testable import XMPPServer

/// The `component_listen`, `component_allow_remote` and `components` keys.
@Suite struct ComponentConfigTests {
    private func parse(_ text: String) throws -> ServerConfig {
        try ServerConfig.parse(text, fileName: "s.conf")
    }

    private func error(_ text: String) throws -> ConfigError {
        try #require(throws: ConfigError.self) { try parse(text) }
    }

    @Test func offByDefault() throws {
        let config = ServerConfig()
        #expect(config.components == ServerConfig.Components(listen: [], allowRemote: false, services: []))
        #expect(config.componentDomains.isEmpty)
    }

    @Test func namesBecomeSubdomainsAndWholeDomainsStay() throws {
        let config = try parse(
            """
            domain = ydc.local
            component_listen = 127.0.0.1:5347, [::1]:5347
            components = gateway=s3cret, "Push.Example.ORG=a,b=c#d"
            """)
        #expect(config.components.listen.map(\.description) == ["127.0.0.1:5347", "[::1]:5347"])
        #expect(config.componentDomains == ["gateway.ydc.local", "push.example.org"])
        #expect(config.components.services.map(\.secret) == ["s3cret", "a,b=c#d"])
    }

    @Test func checkConfigNeverShowsASecret() throws {
        let config = try parse("components = gateway=topsecret")
        let report = checkConfigReport(config)
        #expect(!report.contains("topsecret"))
        #expect(report.contains("gateway.localhost=(hidden)"))
    }

    @Test func badEntriesAreRefused() throws {
        #expect(try error("components = gateway").message.hasPrefix("expected NAME=SECRET"))
        #expect(try error("components = gateway=").message.hasPrefix("expected NAME=SECRET"))
        #expect(try error("components = =s").message.hasPrefix("expected NAME=SECRET"))
        #expect(try error("components = a=1, A=2").message == "a.localhost is listed twice")
        #expect(try error("components = conference=1").message.contains("is taken by"))
        #expect(try error("domain = ydc.local\ncomponents = ydc.local=1").message.contains("is taken by"))
        #expect(try error("components = a..b=1").key == "components")
        #expect(try error("component_listen = 127.0.0.1:5347").message.contains("components lists none"))
    }

    @Test func remoteListenersNeedTheExplicitKeyAndWarn() throws {
        let refused = try error("component_listen = 0.0.0.0:5347\ncomponents = a=1")
        #expect(refused.key == "component_listen")
        #expect(refused.message.contains("component_allow_remote = yes"))
        let allowed = try parse("component_listen = 0.0.0.0:5347\ncomponent_allow_remote = yes\ncomponents = a=1")
        #expect(allowed.warnings.contains { $0.contains("components connect in plaintext on 0.0.0.0:5347") })
        let local = try parse("component_listen = 127.0.0.1:5347\ncomponents = a=1")
        #expect(!local.warnings.contains { $0.contains("components") })
    }

    @Test func componentListenerMayNotReuseAnotherListenersAddress() throws {
        let clash = try error("listen = 127.0.0.1:5222\ncomponent_listen = 127.0.0.1:5222\ncomponents = a=1")
        #expect(clash.key == "component_listen")
    }
}
