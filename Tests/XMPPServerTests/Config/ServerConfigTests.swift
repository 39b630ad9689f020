import Foundation
import Testing

@testable import XMPPServer

@Suite struct ServerConfigTests {
    private func parse(_ text: String, overrides: [ConfigOverride] = []) throws -> ServerConfig {
        try ServerConfig.parse(text, fileName: "s.conf", overrides: overrides)
    }

    private func error(_ text: String, overrides: [ConfigOverride] = []) throws -> ConfigError {
        try #require(throws: ConfigError.self) { try parse(text, overrides: overrides) }
    }

    @Test func noFileGivesTheDefaults() throws {
        let config = try ServerConfig.load(from: nil)
        #expect(config == ServerConfig())
        #expect(config.domain == "localhost")
        #expect(config.dataDirectory == "data")
        #expect(config.listen.map(\.description) == ["127.0.0.1:5222", "[::1]:5222"])
        #expect(config.directTLSListen.isEmpty)
        #expect(config.threads == ProcessInfo.processInfo.activeProcessorCount)
        #expect(config.logLevel == .info)
        #expect(config.tls == ServerConfig.TLS(policy: .auto, certificate: "", privateKey: ""))
        #expect(config.registration.mode == .open)
        #expect(config.registration.throttle == ServerConfig.Throttle(5, per: .seconds(3600)))
        #expect(config.registration.throttleExemptsLoopback)
        #expect(config.authentication.saslMaxAttempts == 5)
        #expect(config.authentication.scramIterations == 4096)
        #expect(config.authentication.loginThrottle == ServerConfig.Throttle(10, per: .seconds(300)))
        #expect(config.timeouts.handshake == .seconds(30))
        #expect(config.timeouts.idle == .seconds(300))
        #expect(config.timeouts.keepaliveInterval == .seconds(60))
        #expect(config.limits.maxStanzaSize == 1_048_576)
        #expect(config.limits.maxStanzaSizeUnauthenticated == 16_384)
        #expect(config.archive == ServerConfig.Archive(enabled: true, defaultRule: .always, retention: .seconds(365 * 86_400)))
        #expect(try config.validated() == config)
    }

    @Test func everyKeySetsItsField() throws {
        let config = try parse(
            """
            domain = YDC.local.
            data_directory = "/var/lib/swift let"
            listen = 0.0.0.0:5222, [::]:5222
            direct_tls_listen = 127.0.0.1:5223
            threads = 4
            log_level = debug
            tls = required
            certificate = /etc/ssl/ydc.crt
            private_key = /etc/ssl/ydc.key
            registration = closed
            registration_throttle = 2 per 10m
            registration_throttle_exempt_loopback = no
            sasl_max_attempts = 3
            scram_iterations = 10000
            login_throttle = off
            handshake_timeout = 10s
            idle_timeout = 10m
            keepalive_interval = 2m
            max_stanza_size = 2MiB
            max_stanza_size_unauthenticated = 32KiB
            archive = off
            mam_default = roster
            mam_retention = 30d
            """)
        var expected = ServerConfig()
        expected.domain = "ydc.local"
        expected.dataDirectory = "/var/lib/swift let"
        expected.listen = [try ListenAddress.parse("0.0.0.0:5222"), try ListenAddress.parse("[::]:5222")]
        expected.directTLSListen = [try ListenAddress.parse("127.0.0.1:5223")]
        expected.threads = 4
        expected.logLevel = .debug
        expected.tls = ServerConfig.TLS(
            policy: .required, certificate: "/etc/ssl/ydc.crt", privateKey: "/etc/ssl/ydc.key")
        expected.registration = ServerConfig.Registration(
            mode: .closed, throttle: ServerConfig.Throttle(2, per: .seconds(600)), throttleExemptsLoopback: false)
        expected.authentication = ServerConfig.Authentication(
            saslMaxAttempts: 3, scramIterations: 10000, loginThrottle: nil)
        expected.timeouts = ServerConfig.Timeouts(
            handshake: .seconds(10), idle: .seconds(600), keepaliveInterval: .seconds(120))
        expected.limits = ServerConfig.Limits(maxStanzaSize: 2 << 20, maxStanzaSizeUnauthenticated: 32 << 10)
        expected.archive = ServerConfig.Archive(enabled: false, defaultRule: .roster, retention: .seconds(30 * 86_400))
        #expect(config == expected)
    }

    @Test func unknownKeySuggestsACloseOne() throws {
        let typo = try error("domain = a.example\nidle_timout = 10m")
        #expect(typo.location == .line(file: "s.conf", line: 2))
        #expect(typo.key == "idle_timout")
        #expect(typo.description == "s.conf:2: idle_timout: unknown key; did you mean 'idle_timeout'?")
        #expect(try error("data-directory = x").message == "unknown key; did you mean 'data_directory'?")
        #expect(try error("Domain = x").message == "unknown key; did you mean 'domain'?")
        #expect(try error("allow_plain_without_tls = yes").message == "unknown key")
    }

    /// Only keys of about the typed length are compared, so an unknown key
    /// of a megabyte (a binary file given as the config) is reported at
    /// once rather than after comparing it with every key.
    @Test(.timeLimit(.minutes(1))) func aHugeUnknownKeyIsReportedAtOnce() throws {
        #expect(try error(String(repeating: "a", count: 1 << 20) + " = 1").message == "unknown key")
    }

    @Test func duplicateKeyNamesBothLines() throws {
        let duplicate = try error("threads = 2\n\ntls = auto\nthreads = 3")
        #expect(duplicate.description == "s.conf:4: threads: set twice (first on line 1)")
    }

    @Test func scalarKeysTakeOneValue() throws {
        #expect(try error("domain = a.example, b.example").message.hasPrefix("expected one value"))
        #expect(try error("threads =").message == "missing value: expected a whole number such as 4096")
        #expect(try parse("certificate =\nprivate_key = \"\"").tls.certificate == "")
        #expect(try parse("direct_tls_listen =").directTLSListen.isEmpty)
    }

    @Test(arguments: [
        ("idle_timeout = 5 minutes", "idle_timeout", "expected a duration such as 30s, 5m or 2h"),
        ("max_stanza_size = 1MB", "max_stanza_size", "expected a size such as 65536, 64KiB or 1MiB"),
        (
            "registration_throttle_exempt_loopback = sometimes", "registration_throttle_exempt_loopback",
            "expected yes or no"
        ),
        ("listen = localhost:5222", "listen", "host names such as localhost are not resolved"),
        ("listen = 127.0.0.1:5222, ::1:5222", "listen", "an IPv6 address needs brackets"),
        ("domain = alice@ydc.local", "domain", "expected a domain only"),
        ("tls = yes", "tls", "expected auto, required or optional, got 'yes'"),
        ("log_level = verbose", "log_level", "expected debug, info, notice, warning or error"),
        ("registration = invite", "registration", "expected open or closed"),
        ("version_reply = hidden", "version_reply", "expected full, name_only or off, got 'hidden'"),
        ("threads = many", "threads", "expected a whole number"),
        ("mam_default = sometimes", "mam_default", "expected always, never or roster"),
        ("mam_retention = never", "mam_retention", "expected a duration such as 30d or 12h, or forever"),
    ])
    func badValuesNameFileLineAndKey(line: String, key: String, expected: String) throws {
        let failure = try error("# comment\n\(line)")
        #expect(failure.location == .line(file: "s.conf", line: 2))
        #expect(failure.key == key)
        #expect(failure.message.contains(expected), "\(failure)")
        #expect(failure.description.hasPrefix("s.conf:2: \(key): "))
    }

    @Test(arguments: [
        ("idle_timeout = 150s", "idle_timeout", "must be more than 150s, got 150s"),
        ("idle_timeout = 2m", "idle_timeout", "must be more than 150s, got 2m"),
        ("scram_iterations = 4095", "scram_iterations", "must be from 4096 to 1000000, got 4095"),
        ("scram_iterations = 2000000", "scram_iterations", "must be from 4096 to 1000000"),
        ("sasl_max_attempts = 0", "sasl_max_attempts", "must be from 1 to 100, got 0"),
        ("threads = 0", "threads", "must be from 1 to 256, got 0"),
        ("handshake_timeout = 0", "handshake_timeout", "must be from 1s to 1h, got 0s"),
        ("handshake_timeout = 2h", "handshake_timeout", "must be from 1s to 1h, got 2h"),
        ("keepalive_interval = 500ms", "keepalive_interval", "must be from 1s to 1d"),
        ("max_stanza_size_unauthenticated = 9999", "max_stanza_size_unauthenticated", "must be from 10000 to 64MiB"),
        ("max_stanza_size = 8KiB", "max_stanza_size", "must be from 16KiB to 64MiB, got 8KiB"),
        ("max_stanza_size = 128MiB", "max_stanza_size", "must be from 16KiB to 64MiB"),
        ("max_stanza_size = 2GiB", "max_stanza_size", "must be from 16KiB to 64MiB"),
        ("vcard_max_size = 1000", "vcard_max_size", "must be from 1KiB to 64MiB, got 1000"),
        ("offline_quota_size = 2GiB", "offline_quota_size", "must be from 0 to 1GiB, got 2GiB"),
        ("blocklist_max_items = 0", "blocklist_max_items", "must be from 1 to 100000, got 0"),
        ("registration_throttle = 0 per 1h", "registration_throttle", "expected at least 1 per at least 1s"),
        ("login_throttle = 3 per 0s", "login_throttle", "expected at least 1 per at least 1s"),
        ("data_directory = \"\"", "data_directory", "must not be empty"),
        ("listen =", "listen", "no listener"),
        ("listen = 127.0.0.1:5222, 127.0.0.1:5222", "listen", "127.0.0.1:5222 is listed twice"),
        ("direct_tls_listen = [::1]:5222", "direct_tls_listen", "[::1]:5222 is listed twice"),
        ("certificate = a.crt", "certificate", "private_key is not"),
        ("private_key = a.key", "private_key", "certificate is not"),
        ("mam_retention = 59m", "mam_retention", "must be at least 1h, got 59m; or forever"),
    ])
    func outOfRangeValuesNameTheirLine(line: String, key: String, expected: String) throws {
        let failure = try error("domain = ydc.local\n\(line)\n")
        #expect(failure.location == .line(file: "s.conf", line: 2))
        #expect(failure.key == key)
        #expect(failure.message.contains(expected), "\(failure)")
    }

    @Test func limitsAtTheEdgesAreAccepted() throws {
        let config = try parse(
            "idle_timeout = 151s\nscram_iterations = 4096\nmax_stanza_size_unauthenticated = 10000\n"
                + "max_stanza_size = 10000\nlisten = 127.0.0.1:0, 127.0.0.1:0\nvcard_max_size = 1KiB\nmam_retention = 1h\n"
                + "offline_quota_size = 0")
        #expect(config.timeouts.idle == .seconds(151))
        #expect(config.limits.offlineQuotaSize == 0)
        #expect(config.listen.count == 2)
        #expect(config.limits.maxVCardSize == 1024)
        #expect(config.archive.retention == .seconds(3600))
    }

    @Test func overridesWinOverTheFile() throws {
        let options = try ServerOptions.parse([
            "--domain", "ydc.local", "--listen", "0.0.0.0:5222", "--listen=[::]:5222", "--data-dir", "/tmp/d",
            "--tls", "optional",
        ])
        let config = try parse(
            "domain = file.example\nlisten = 127.0.0.1:5222\ndata_directory = file\ntls = required\nthreads = 2",
            overrides: options.overrides)
        #expect(config.domain == "ydc.local")
        #expect(config.listen.map(\.description) == ["0.0.0.0:5222", "[::]:5222"])
        #expect(config.dataDirectory == "/tmp/d")
        #expect(config.tls.policy == .optional)
        #expect(config.threads == 2)
    }

    @Test func badOverridesNameTheOption() throws {
        let bad = try error("", overrides: [ConfigOverride(option: "--tls", key: "tls", values: ["maybe"])])
        #expect(bad.description == "option --tls: expected auto, required or optional, got 'maybe'")
        let clash = try error(
            "certificate = a.crt\nprivate_key = a.key",
            overrides: [ConfigOverride(option: "--listen", key: "listen", values: [])])
        #expect(clash.location == .option("--listen"))
        #expect(clash.key == "listen")
    }

    @Test func validationOfADefaultNamesOnlyTheKey() throws {
        var config = ServerConfig()
        config.timeouts.idle = .seconds(60)
        let failure = try #require(throws: ConfigError.self) { try config.validated() }
        #expect(failure.location == nil)
        #expect(failure.description.hasPrefix("idle_timeout: must be more than 150s"))
        config = ServerConfig()
        config.domain = "Example.COM"
        #expect(try config.validated().domain == "example.com")
    }

    @Test func loadReadsAFileAndRefusesAMissingOne() throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftletd-\(UUID().uuidString).conf").path
        try "domain = ydc.local\nidle_timeout = 10m\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let config = try ServerConfig.load(from: path)
        #expect(config.domain == "ydc.local")
        #expect(config.timeouts.idle == .seconds(600))

        try "threads = 0\n".write(toFile: path, atomically: true, encoding: .utf8)
        let invalid = try #require(throws: ConfigError.self) { try ServerConfig.load(from: path) }
        #expect(invalid.location == .line(file: path, line: 1))

        let missing = path + ".missing"
        let failure = try #require(throws: ConfigError.self) { try ServerConfig.load(from: missing) }
        #expect(failure.location == .file(missing))
        #expect(failure.description == "\(missing): cannot read the config file: no such file")
    }
}
