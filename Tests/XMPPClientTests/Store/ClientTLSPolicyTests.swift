import Foundation
import Testing
import XMPPClient
import XMPPCore

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
