import Foundation
import Testing
import XMPPCore

@testable import XMPPClient

/// `ClientTLSPolicy`'s text form, as `--tls` takes it.
@Suite struct ClientTLSPolicyTests {
    static let fingerprint = CertificateFingerprint(bytes: Array(0..<32))!
    static let printed =
        "pin:00:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:"
        + "10:11:12:13:14:15:16:17:18:19:1A:1B:1C:1D:1E:1F"

    @Test func printsAndParsesBack() {
        let policies: [ClientTLSPolicy] = [
            .requireValid, .pinned(Self.fingerprint), .insecureAcceptAny,
        ]
        #expect(policies.map(\.description) == ["require", Self.printed, "insecure"])
        #expect(policies.map { ClientTLSPolicy($0.description) } == policies)
    }

    @Test func aPinTakesHexInEitherCaseWithOrWithoutColons() {
        let bare = "pin:" + (0..<32).map { String(format: "%02x", $0) }.joined()
        #expect(ClientTLSPolicy(bare) == .pinned(Self.fingerprint))
        #expect(ClientTLSPolicy(Self.printed.lowercased()) == .pinned(Self.fingerprint))
        let spaced = Self.printed.replacingOccurrences(of: ":", with: " ").replacingOccurrences(
            of: "pin ", with: "pin:")
        #expect(ClientTLSPolicy(spaced) == .pinned(Self.fingerprint))
    }

    @Test(arguments: [
        "", "Require", "secure", "pin:", "pin:00", "pin:" + String(repeating: "zz", count: 32),
        "pin:" + String(repeating: "00", count: 33), "pin " + String(repeating: "00", count: 32),
        "sha256:" + String(repeating: "00", count: 32),
    ])
    func refusesAnythingElse(_ text: String) {
        #expect(ClientTLSPolicy(text) == nil)
    }
}

/// Which certificate an HTTPS transfer (XEP-0363) accepts, and which name
/// it sends as SNI: always the URL's host, with the pin only for the
/// account's own server.
@Suite struct HTTPSTrustTests {
    private static func configuration(_ policy: ClientTLSPolicy) -> ClientConfiguration {
        var configuration = ClientConfiguration(jid: try! JID("alice@example.com"), secret: .password("pw"))
        configuration.host = "xmpp.example.com"
        configuration.tls = policy
        return configuration
    }

    @Test func aValidCertificateMustNameTheURLsHostNotTheJIDsDomain() {
        let trust = Self.configuration(.requireValid)
        for (host, namedByServer) in [("files.example.net", false), ("upload.example.com", true)] {
            #expect(
                trust.httpsTLSConfiguration(host: host, namedByServer: namedByServer)
                    == .client(verification: .requireValid(hostname: host), serverName: host))
        }
    }

    @Test(arguments: ["example.com", "XMPP.example.com", "upload.example.com"])
    func thePinHoldsForTheAccountsServerAndHostsItNames(_ host: String) {
        let trust = Self.configuration(.pinned(ClientTLSPolicyTests.fingerprint))
        #expect(
            trust.httpsTLSConfiguration(host: host, namedByServer: host.hasPrefix("upload"))
                == .client(verification: .pinned(ClientTLSPolicyTests.fingerprint), serverName: host))
    }

    @Test(arguments: [ClientTLSPolicy.pinned(ClientTLSPolicyTests.fingerprint), .insecureAcceptAny])
    func anyOtherHostNeedsACertificateValidForIt(_ policy: ClientTLSPolicy) {
        let trust = Self.configuration(policy)
        for host in ["files.example.net", "example.com.evil.net", "192.0.2.7"] {
            #expect(
                trust.httpsTLSConfiguration(host: host, namedByServer: false)
                    == .client(verification: .requireValid(hostname: host), serverName: host))
        }
    }
}
