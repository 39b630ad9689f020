import Testing

@testable import XMPPServer

@Suite struct ConfigValueTypeTests {
    @Test(arguments: [
        ("30", Duration.seconds(30)), ("30s", .seconds(30)), ("30 s", .seconds(30)), ("5m", .seconds(300)),
        ("2h", .seconds(7200)), ("1d", .seconds(86_400)), ("250ms", .milliseconds(250)), ("0", .zero),
    ])
    func durations(text: String, expected: Duration) throws {
        #expect(try ConfigValueType.duration.parse(text) == expected)
    }

    @Test(arguments: ["", "s", "5 minutes", "1.5h", "-5s", "5M", "5x", "99999999999999999999s", "9223372036854775807h"])
    func badDurations(text: String) {
        let error = #expect(throws: ConfigValueError.self) { try ConfigValueType.duration.parse(text) }
        #expect(error?.message.contains("expected a duration such as 30s, 5m or 2h") == true)
    }

    @Test(arguments: [
        (Duration.seconds(30), "30s"), (.seconds(60), "1m"), (.seconds(300), "5m"), (.seconds(90), "90s"),
        (.seconds(7200), "2h"), (.seconds(86_400), "1d"), (.milliseconds(1500), "1500ms"), (.zero, "0s"),
    ])
    func durationsFormatInTheLargestExactUnit(duration: Duration, expected: String) throws {
        #expect(ConfigValueType.duration.format(duration) == expected)
        #expect(try ConfigValueType.duration.parse(expected) == duration)
    }

    @Test(arguments: [
        ("65536", 65536), ("100B", 100), ("256KiB", 262_144), ("1MiB", 1_048_576), ("2 GiB", 2_147_483_648),
    ])
    func sizes(text: String, expected: Int) throws {
        #expect(try ConfigValueType.size.parse(text) == expected)
        #expect(try ConfigValueType.size.parse(ConfigValueType.size.format(expected)) == expected)
    }

    @Test(arguments: ["1MB", "1 mb", "1K", "KiB", "1.5MiB", "-1", "9999999999999999999GiB"])
    func badSizes(text: String) {
        let error = #expect(throws: ConfigValueError.self) { try ConfigValueType.size.parse(text) }
        #expect(error?.message.contains("expected a size such as 65536, 64KiB or 1MiB") == true)
    }

    @Test func sizesFormatInTheLargestExactUnit() {
        #expect(ConfigValueType.size.format(1 << 20) == "1MiB")
        #expect(ConfigValueType.size.format(16 << 10) == "16KiB")
        #expect(ConfigValueType.size.format(10_000) == "10000")
    }

    @Test(arguments: [
        ("yes", true), ("true", true), ("on", true), ("YES", true),
        ("no", false), ("false", false), ("off", false), ("Off", false),
    ])
    func booleans(text: String, expected: Bool) throws {
        #expect(try ConfigValueType.boolean.parse(text) == expected)
    }

    @Test(arguments: ["1", "0", "y", "enabled", ""])
    func badBooleans(text: String) {
        let error = #expect(throws: ConfigValueError.self) { try ConfigValueType.boolean.parse(text) }
        #expect(error?.message.hasPrefix("expected yes or no") == true)
    }

    @Test func integers() throws {
        #expect(try ConfigValueType.integer.parse("4096") == 4096)
        for bad in ["", "-1", "+1", "4 096", "4_096", "0x10", "99999999999999999999"] {
            #expect(throws: ConfigValueError.self, "\(bad)") { try ConfigValueType.integer.parse(bad) }
        }
    }

    @Test func choices() throws {
        let policy = ConfigValueType.choice(ServerConfig.TLSPolicy.self)
        #expect(try policy.parse("Required") == .required)
        let error = #expect(throws: ConfigValueError.self) { try policy.parse("maybe") }
        #expect(error?.message == "expected auto, required or optional, got 'maybe'")
    }

    @Test func throttles() throws {
        #expect(try ConfigValueType.throttle.parse("5 per 1h") == ServerConfig.Throttle(5, per: .seconds(3600)))
        #expect(try ConfigValueType.throttle.parse("10  per  300") == ServerConfig.Throttle(10, per: .seconds(300)))
        #expect(try ConfigValueType.throttle.parse("off") == nil)
        #expect(ConfigValueType.throttle.format(ServerConfig.Throttle(10, per: .seconds(300))) == "10 per 5m")
        #expect(ConfigValueType.throttle.format(nil) == "off")
        for bad in ["5/1h", "5 per", "per 1h", "five per 1h", "5 per hour", "5 every 1h"] {
            let error = #expect(throws: ConfigValueError.self, "\(bad)") { try ConfigValueType.throttle.parse(bad) }
            #expect(error?.message.contains("a count per period such as '5 per 1h'") == true)
        }
    }

    @Test(arguments: [
        ("localhost", "localhost"), ("ydc.local", "ydc.local"), ("Example.COM.", "example.com"),
        ("192.168.1.20", "192.168.1.20"), ("127.0.0.1", "127.0.0.1"), ("[::1]", "[::1]"),
        ("[0:0::1]", "[::1]"), ("bücher.example", "bücher.example"),
    ])
    func domainsAreNormalized(text: String, expected: String) throws {
        #expect(try ConfigValueType.domain.parse(text) == expected)
    }

    @Test(arguments: [
        ("alice@localhost", "expected a domain only"), ("localhost/res", "expected a domain only"),
        ("bad domain", "is not a valid domain"), ("-bad.example", "is not a valid domain"),
        ("::1", "an IPv6 address goes in brackets"), ("[::g]", "not a valid IP address"),
    ])
    func badDomains(text: String, expected: String) {
        let error = #expect(throws: ConfigValueError.self) { try ConfigValueType.domain.parse(text) }
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
    }
}
