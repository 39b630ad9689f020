import Testing

@testable import XMPPServer

/// The `http_*` and `upload_*` keys: defaults, parsing, the derived
/// addresses and URLs, and what validation refuses.
@Suite struct UploadConfigTests {
    private func parse(_ text: String, overrides: [ConfigOverride] = []) throws -> ServerConfig {
        try ServerConfig.parse(text, fileName: "s.conf", overrides: overrides)
    }

    private func error(_ text: String) throws -> ConfigError {
        try #require(throws: ConfigError.self) { try parse(text) }
    }

    @Test func defaults() throws {
        let config = try parse("")
        #expect(config.http.listen.map(\.description) == ["127.0.0.1:5280", "[::1]:5280"])
        #expect(config.http.tlsListen.map(\.description) == ["127.0.0.1:5281", "[::1]:5281"])
        #expect(config.http.timeout == .seconds(30))
        #expect(config.upload.enabled)
        #expect(config.uploadService == "upload.localhost")
        #expect(config.uploadServiceAddresses == ["upload.localhost", "httpfileupload.localhost"])
        #expect(config.upload.maxFileSize == 100 << 20)
        #expect(config.upload.quota == 1 << 30)
        #expect(config.upload.slotLifetime == .seconds(300))
        #expect(config.upload.expiry == .seconds(30 * 86_400))
        #expect(config.effectiveUploadURL()?.url == "https://localhost:5281", "Gajim, Dino and iOS refuse http")
        #expect(config.uploadWarnings.isEmpty)
    }

    @Test func plainHTTPUploadsAreChosenExplicitlyAndWarned() throws {
        let config = try parse("https_listen =")
        #expect(config.effectiveUploadURL()?.url == "http://localhost:5280")
        #expect(config.uploadWarnings.count == 1)
        #expect(config.uploadWarnings.first?.hasPrefix("upload URLs are plain http:// (https_listen is empty)") == true)
        #expect(ClientReach(config).uploads.hasSuffix("(plain HTTP: Gajim, Dino and iOS apps refuse it)"))
    }

    @Test func everyKeySetsItsField() throws {
        let config = try parse(
            """
            domain = ydc.local
            http_listen = 127.0.0.1:8080
            https_listen = 0.0.0.0:8443, [::]:8443
            http_timeout = 1m
            upload = yes
            upload_service = Files.YDC.local
            upload_url = https://files.ydc.local/
            upload_max_size = 1GiB
            upload_quota = 10GiB
            upload_slot_lifetime = 60s
            upload_expiry = 7d
            """)
        #expect(config.http.listen.map(\.description) == ["127.0.0.1:8080"])
        #expect(config.http.tlsListen.map(\.description) == ["0.0.0.0:8443", "[::]:8443"])
        #expect(config.http.timeout == .seconds(60))
        #expect(config.upload.service == "files.ydc.local", "normalized as a domain")
        #expect(config.upload.url == "https://files.ydc.local", "without the trailing slash")
        #expect(config.upload.maxFileSize == 1 << 30)
        #expect(config.upload.quota == 10 << 30)
        #expect(config.upload.slotLifetime == .seconds(60))
        #expect(config.upload.expiry == .seconds(7 * 86_400))
        #expect(config.uploadServiceAddresses == ["files.ydc.local", "httpfileupload.ydc.local"])
        #expect(config.effectiveUploadURL()! == ("https://files.ydc.local", "set in the config (upload_url)"))
    }

    @Test func theURLPrefersHTTPSAndTakesTheBoundPorts() throws {
        let https = try parse("domain = ydc.local\nhttps_listen = 0.0.0.0:5281")
        #expect(https.effectiveUploadURL()?.url == "https://ydc.local:5281")
        let zero = try parse("http_listen = 127.0.0.1:0\nhttps_listen =")
        #expect(zero.effectiveUploadURL(httpPort: 41234)?.url == "http://localhost:41234")
        let none = try parse("http_listen =\nhttps_listen =\nupload = no")
        #expect(none.effectiveUploadURL() == nil)
        let ipv6 = try parse("domain = [::1]")
        #expect(ipv6.effectiveUploadURL()?.url == "https://[::1]:5281")
        #expect(try parse("upload_service = httpfileupload.localhost").uploadServiceAddresses == ["httpfileupload.localhost"])
    }

    @Test(arguments: [
        ("http_listen = 0.0.0.0:5280", "http_listen", "plain HTTP is served on loopback only"),
        ("http_listen = 127.0.0.1:5222", "http_listen", "listed twice"),
        ("https_listen = 127.0.0.1:5280", "https_listen", "listed twice"),
        ("http_listen =\nhttps_listen =", "upload", "nothing serves the files"),
        ("upload_service = localhost", "upload_service", "must differ from the domain"),
        ("upload_service = a@b", "upload_service", "expected a domain only"),
        ("upload_url = ftp://x", "upload_url", "expected an http:// or https:// URL"),
        ("upload_url = https://x/?a=b", "upload_url", "without query or fragment"),
        ("upload_url = https:///path", "upload_url", "expected a base URL"),
        ("upload_max_size = 512", "upload_max_size", "must be from 1KiB to 64GiB"),
        ("upload_max_size = 2GiB\nupload_quota = 1GiB", "upload_quota", "would refuse the largest files"),
        ("upload_slot_lifetime = 1s", "upload_slot_lifetime", "must be from 10s to 1d"),
        ("upload_expiry = 10m", "upload_expiry", "must be from 1h to 3650d"),
        ("http_timeout = 0s", "http_timeout", "must be from 1s to 1h"),
    ])
    func refused(_ text: String, key: String, expected: String) throws {
        let failure = try error(text)
        #expect(failure.key == key, "\(failure)")
        #expect(failure.message.contains(expected), "\(failure)")
    }

    @Test func uploadOffNeedsNoListener() throws {
        let config = try parse("upload = no\nhttp_listen =")
        #expect(!config.upload.enabled)
        #expect(config.uploadWarnings.isEmpty)
    }

    @Test func httpListenIsAnOption() throws {
        let options = try ServerOptions.parse(["--http-listen", "127.0.0.1:0", "--http-listen=[::1]:0"])
        #expect(options.overrides == [ConfigOverride(option: "--http-listen", key: "http_listen", values: ["127.0.0.1:0", "[::1]:0"])])
        let config = try parse("", overrides: options.overrides)
        #expect(config.http.listen.map(\.description) == ["127.0.0.1:0", "[::1]:0"])
    }

    @Test func theReportNamesTheServiceAndItsURLs() throws {
        let report = checkConfigReport(try parse("domain = ydc.local"))
        let lines = report.split(separator: "\n").map(String.init)
        #expect(lines.contains("Upload (XEP-0363): service upload.ydc.local (also httpfileupload.ydc.local)"))
        #expect(lines.contains("  URLs https://ydc.local:5281/upload/…: the first https_listen address"))
        #expect(lines.contains("http_listen                           = 127.0.0.1:5280, [::1]:5280"))
        let off = checkConfigReport(try parse("upload = no"))
        #expect(off.contains("Upload (XEP-0363): off; nothing listens for HTTP"))
    }
}
