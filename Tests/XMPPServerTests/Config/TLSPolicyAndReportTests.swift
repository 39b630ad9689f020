import Testing

@testable import XMPPServer

@Suite struct TLSPolicyAndReportTests {
    private func config(_ text: String) throws -> ServerConfig {
        try ServerConfig.parse(text, fileName: "t.conf")
    }

    @Test func loopbackOnlyIsOptionalAndAllowsSCRAM() throws {
        let policy = try config("").effectiveTLSPolicy
        #expect(policy.requirement == .optional)
        #expect(policy.description == "optional: every listener is on loopback")
        #expect(policy.allowsSCRAMWithoutTLS)
        #expect(try config("listen = 127.0.0.2:5222, [::ffff:127.0.0.1]:5222").effectiveTLSPolicy == policy)
    }

    @Test func anyNonLoopbackListenerMakesItRequired() throws {
        let policy = try config("listen = 127.0.0.1:5222, 0.0.0.0:5222, [::]:5222").effectiveTLSPolicy
        #expect(policy.requirement == .required)
        #expect(policy.description == "required: 0.0.0.0:5222 is not loopback")
        #expect(!policy.allowsSCRAMWithoutTLS)
        let lan = try config("listen = [::1]:5222, 192.168.1.20:5222").effectiveTLSPolicy
        #expect(lan.reason == "192.168.1.20:5222 is not loopback")
    }

    @Test func directTLSListenersExposeNoPlaintext() throws {
        let policy = try config("direct_tls_listen = 0.0.0.0:5223").effectiveTLSPolicy
        #expect(policy.requirement == .optional)
        #expect(policy.reason == "every STARTTLS listener is on loopback (direct TLS listeners always use TLS)")
    }

    @Test func explicitPolicyWins() throws {
        let required = try config("tls = required").effectiveTLSPolicy
        #expect(required.description == "required: set in the config (tls = required)")
        let optional = try config("tls = optional\nlisten = 0.0.0.0:5222").effectiveTLSPolicy
        #expect(optional.description == "optional: set in the config (tls = optional)")
        #expect(optional.allowsSCRAMWithoutTLS)
    }

    @Test func certificateSource() throws {
        #expect(
            try config("domain = ydc.local\ndata_directory = /srv/x/").certificateSource
                == .generated(certificate: "/srv/x/tls/ydc.local.crt", privateKey: "/srv/x/tls/ydc.local.key"))
        #expect(
            try config("certificate = c.pem\nprivate_key = k.pem").certificateSource
                == .files(certificate: "c.pem", privateKey: "k.pem"))
    }

    @Test func defaultsHaveNoWarnings() throws {
        #expect(try config("").warnings == [])
    }

    @Test func riskySettingsWarn() throws {
        let warnings = try config(
            "listen = 0.0.0.0:5222\ntls = optional\nlogin_throttle = off\nmax_stanza_size = 512KiB"
        ).warnings
        #expect(warnings.count == 6, "\(warnings)")
        #expect(warnings[0].hasPrefix("registration is open on 0.0.0.0:5222, which is not loopback"))
        #expect(warnings[1].hasPrefix("TLS is optional on 0.0.0.0:5222"))
        #expect(warnings[2].hasPrefix("the certificate is the server's own: clients on other machines refuse it"))
        #expect(warnings[3].hasPrefix("login_throttle is off"))
        #expect(warnings[4].hasPrefix("max_stanza_size is below 1MiB"))
        #expect(warnings[5].hasPrefix("clients on other machines cannot upload files"))
        let closed = try config(
            "listen = 0.0.0.0:5222\nregistration = closed\ncertificate = c\nprivate_key = k\n"
                + "https_listen = 0.0.0.0:5281"
        ).warnings
        #expect(closed == [])
    }

    @Test func reportShowsSettingsPolicyReasonAndCertificate() throws {
        let report = checkConfigReport(try config("domain = ydc.local"))
        let lines = report.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains("domain                                = ydc.local"))
        #expect(lines.contains("listen                                = 127.0.0.1:5222, [::1]:5222"))
        #expect(lines.contains("direct_tls_listen                     ="))
        #expect(lines.contains("TLS in force: optional: every listener is on loopback"))
        #expect(lines.contains { $0.contains("SCRAM-SHA-1 and SCRAM-SHA-256 work without TLS") })
        #expect(lines.contains("  PLAIN is accepted only over TLS"))
        #expect(lines.contains("SASL without TLS (RFC 6120 only): SCRAM-SHA-256, SCRAM-SHA-1"))
        #expect(lines.contains { $0.hasPrefix("SASL over TLS") && $0.contains("SCRAM-SHA-256-PLUS") })
        #expect(lines.contains { $0.contains("FAST (XEP-0484)") && $0.contains("tokens valid 21d") })
        #expect(
            lines.contains {
                $0.hasPrefix("Certificate: issued for ydc.local by the local CA") && $0.contains("data/tls/ydc.local.crt")
            })
        #expect(lines.contains("Connect: USER@ydc.local at 127.0.0.1 or ::1 port 5222 (STARTTLS)"))
        #expect(lines.contains("Uploads: https://ydc.local:5281/upload/…"))
        #expect(
            lines.contains(
                "Trust: the local CA the server creates at first start (data/tls/ydc.local-ca.crt); "
                    + "then: swiftletd trust"))
        #expect(!report.contains("warning:"))
    }

    @Test func reportOfAnExposedServerWarns() throws {
        let report = checkConfigReport(try config("listen = 0.0.0.0:5222"))
        #expect(report.contains("TLS in force: required: 0.0.0.0:5222 is not loopback"))
        #expect(!report.contains("SASL without TLS"), "nothing but STARTTLS before TLS")
        #expect(report.contains("STARTTLS is offered with <required/>"))
        #expect(report.contains("\nwarning: registration is open on 0.0.0.0:5222"))
    }

    @Test func reportSettingsReadBackAsTheSameConfig() throws {
        let original = try config(
            """
            domain = ydc.local
            data_directory = "dir # with, odd \\"chars\\" "
            listen = 0.0.0.0:0
            direct_tls_listen = [::]:5223
            registration_throttle = off
            keepalive_interval = 90s
            max_stanza_size = 1500000
            """)
        let settings = checkConfigReport(original).split(separator: "\n\n", maxSplits: 1)[0]
        #expect(try config(String(settings)) == original)
    }
}
