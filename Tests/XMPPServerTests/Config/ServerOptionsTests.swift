import Testing

@testable import XMPPServer

@Suite struct ServerOptionsTests {
    @Test func noArguments() throws {
        #expect(try ServerOptions.parse([]) == ServerOptions())
    }

    @Test func everyOptionInBothForms() throws {
        let options = try ServerOptions.parse([
            "check-config", "--config", "etc/swiftletd.conf", "--domain=ydc.local", "--listen", "0.0.0.0:5222",
            "--data-dir", "/srv/data", "--listen=[::]:5222", "--tls", "required", "extra",
        ])
        #expect(options.configPath == "etc/swiftletd.conf")
        #expect(options.arguments == ["check-config", "extra"])
        #expect(
            options.overrides == [
                ConfigOverride(option: "--domain", key: "domain", values: ["ydc.local"]),
                ConfigOverride(option: "--listen", key: "listen", values: ["0.0.0.0:5222", "[::]:5222"]),
                ConfigOverride(option: "--data-dir", key: "data_directory", values: ["/srv/data"]),
                ConfigOverride(option: "--tls", key: "tls", values: ["required"]),
            ])
    }

    @Test func doubleDashEndsOptions() throws {
        let options = try ServerOptions.parse(["adduser", "--", "--odd-name", "-"])
        #expect(options.arguments == ["adduser", "--odd-name", "-"])
        #expect(options.overrides.isEmpty)
    }

    @Test(arguments: [
        (["--domian", "x"], "unknown option --domian"),
        (["-d", "x"], "unknown option -d"),
        (["--domain"], "--domain needs a value"),
        (["--config", "--tls", "auto"], "--config needs a value"),
        (["--domain", "a", "--domain", "b"], "--domain is given twice"),
        (["--config=a", "--config", "b"], "--config is given twice"),
        (["trust", "--install", "--uninstall"], "give --install or --uninstall once"),
    ])
    func usageErrors(arguments: [String], expected: String) {
        let error = #expect(throws: ServerOptions.UsageError.self) { try ServerOptions.parse(arguments) }
        #expect(error?.description == expected)
    }

    @Test func trustTakesInstallOrUninstall() throws {
        #expect(try ServerOptions.parse(["trust"]).trustAction == nil)
        let install = try ServerOptions.parse(["trust", "--install", "--data-dir", "/srv/data"])
        #expect(install.trustAction == .install)
        #expect(install.arguments == ["trust"])
        #expect(install.overrides == [ConfigOverride(option: "--data-dir", key: "data_directory", values: ["/srv/data"])])
        #expect(try ServerOptions.parse(["--uninstall", "trust"]).trustAction == .uninstall)
        #expect(ServerOptions.help.contains("--install, --uninstall"))
    }

    @Test func emptyValueAfterEqualsIsPassedOn() throws {
        let options = try ServerOptions.parse(["--data-dir="])
        #expect(options.overrides == [ConfigOverride(option: "--data-dir", key: "data_directory", values: [""])])
        let error = #expect(throws: ConfigError.self) {
            try ServerConfig.load(from: nil, overrides: options.overrides)
        }
        #expect(error?.description == "option --data-dir: must not be empty")
    }

    @Test func helpMentionsEveryOption() {
        for option in ["--config"] + ServerOptions.keyOptions.keys {
            #expect(ServerOptions.help.contains(option))
        }
    }
}
