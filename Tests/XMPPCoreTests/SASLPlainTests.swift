import Testing

@testable import XMPPCore

/// PLAIN (RFC 4616) and the wire names shared by all mechanisms.
@Suite struct SASLPlainTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func parsesWithAndWithoutAuthorizationIdentity() throws {
        let request = try SASLPlain.parse(Self.bytes("\0Juliet\0r0m30 & more"))
        #expect(request.identity == SASLIdentity(username: "juliet"))
        #expect(request.password == "r0m30 & more")

        let withAuthzid = try SASLPlain.parse(Self.bytes("romeo@example.net\0juliet\0pw"))
        #expect(withAuthzid.identity.authorizationIdentity == "romeo@example.net")
        #expect(withAuthzid.identity.username == "juliet")
    }

    @Test(arguments: [
        "juliet\0pw",  // one NUL
        "\0juliet\0pw\0",  // three NULs
        "\0\0juliet\0pw",
        "\0juliet\0",  // empty password
        "\0\0pw",  // empty username
        "",
        "\0jul iet\0pw",  // PRECIS refuses the username
    ])
    func malformedMessagesAreRefused(_ message: String) {
        #expect(throws: SASLFailure.malformedRequest) { try SASLPlain.parse(Self.bytes(message)) }
    }

    @Test func invalidUTF8AndOverlongPartsAreRefused() {
        let tooLong = String(repeating: "a", count: SASLPlain.maximumPasswordByteCount + 1)
        for message in [
            Self.bytes("\0juliet\0") + [0xFF],
            Self.bytes("\0") + [0xC3] + Self.bytes("\0pw"),
            Self.bytes("\0juliet\0" + tooLong),
            Self.bytes("\0" + tooLong + "\0pw"),
        ] {
            #expect(throws: SASLFailure.malformedRequest) { try SASLPlain.parse(message) }
        }
        let longest = String(repeating: "a", count: SASLPlain.maximumPasswordByteCount)
        #expect((try? SASLPlain.parse(Self.bytes("\0juliet\0" + longest)))?.password == longest)
    }

    @Test func encodesWhatTheServerParses() throws {
        let message = try SASLPlain.encode(username: "Juliet", password: "pencil")
        #expect(message == Self.bytes("\0juliet\0pencil"))
        let withAuthzid = try SASLPlain.encode(
            username: "juliet", password: "pencil", authorizationIdentity: "romeo@example.net")
        let request = try SASLPlain.parse(withAuthzid)
        #expect(
            request.identity
                == SASLIdentity(username: "juliet", authorizationIdentity: "romeo@example.net"))
        #expect(request.password == "pencil")
        let credentials = try SCRAMCredentials(password: "pencil", hashFunction: .sha256)
        #expect(credentials.matches(password: request.password))
    }

    @Test func encodeRefusesEmptyPasswordAndBadUsername() {
        #expect(throws: SASLClientError.invalidPassword) {
            try SASLPlain.encode(username: "juliet", password: "")
        }
        #expect(throws: SASLClientError.invalidUsername) {
            try SASLPlain.encode(username: "", password: "pw")
        }
    }

    @Test func requestDescriptionHidesThePassword() throws {
        let request = try SASLPlain.parse(Self.bytes("\0juliet\0hunter2"))
        #expect(!String(describing: request).contains("hunter2"))
        #expect(String(describing: request).contains("juliet"))
        var dumped = ""
        dump(request, to: &dumped)
        #expect(!dumped.contains("hunter2"))
    }

    // MARK: Wire names

    @Test func failureConditionsMatchRFC6120Section6_5() {
        #expect(
            SASLFailure.allCases.map(\.rawValue) == [
                "aborted", "account-disabled", "credentials-expired", "encryption-required",
                "incorrect-encoding", "invalid-authzid", "invalid-mechanism", "malformed-request",
                "mechanism-too-weak", "not-authorized", "temporary-auth-failure",
            ])
    }

    @Test func mechanismNamesMatchTheRegistry() {
        #expect(
            SASLMechanism.allCases.map(\.rawValue) == [
                "SCRAM-SHA-1", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-256-PLUS", "PLAIN",
            ])
        #expect(SASLMechanism(rawValue: "SCRAM-SHA-1") == .scramSHA1)
        #expect(SASLMechanism(rawValue: "DIGEST-MD5") == nil)
        #expect(SASLMechanism.scramSHA256Plus.scramHashFunction == .sha256)
        #expect(SASLMechanism.scramSHA256Plus.usesChannelBinding)
        #expect(!SASLMechanism.scramSHA1.usesChannelBinding)
        #expect(SASLMechanism.plain.scramHashFunction == nil)
        #expect(
            ChannelBindingType.allCases.map(\.rawValue)
                == ["tls-unique", "tls-server-end-point", "tls-exporter"])
    }

    @Test func payloadDistinguishesAbsentEmptyAndData() throws {
        #expect(try SASLPayload.decode("") == nil)
        #expect(try SASLPayload.decode("=") == [])
        #expect(try SASLPayload.decode("AGp1bGlldABwdw==") == Self.bytes("\0juliet\0pw"))
        #expect(SASLPayload.encode(nil) == "")
        #expect(SASLPayload.encode([]) == "=")
        #expect(SASLPayload.encode(Self.bytes("\0juliet\0pw")) == "AGp1bGlldABwdw==")
    }
}
