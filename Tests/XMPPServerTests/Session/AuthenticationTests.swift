import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// RFC 6120 §6: SASL on the server.
@Suite struct AuthenticationTests {
    private func serverWithJuliet() throws -> TestServer {
        let server = try TestServer()
        try server.addUser("juliet", password: "r0meo")
        return server
    }

    @Test(arguments: [SASLMechanism.scramSHA1, .scramSHA256])
    func scramWithoutTLSOnALoopbackServer(_ mechanism: SASLMechanism) throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        let features = try client.authenticate("juliet", "r0meo", mechanism: mechanism)
        #expect(features.child("bind", namespace: NS.bind) != nil)
        let session = features.child("session", namespace: NS.session)
        #expect(session?.child("optional") != nil, "XMPPFramework skips an optional session")
        #expect(features.child("mechanisms", namespace: NS.sasl) == nil)
    }

    @Test func successCarriesTheServerSignatureForXMPPFramework() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        var scram = try SCRAMClient(mechanism: .scramSHA1, username: "juliet", secret: .password("r0meo"))
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>\(SASLPayload.encode(scram.clientFirstMessage))</auth>")
        let final = try scram.receiveServerFirst(try Base64.decode(client.receiveOne().text))
        client.send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLPayload.encode(final))</response>")
        let success = try client.receiveOne()
        #expect(success.name == "success")
        let decoded = String(decoding: try Base64.decode(success.text), as: UTF8.self)
        #expect(decoded.hasPrefix("v="))
    }

    @Test func plainOverTLS() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        try client.startTLS()
        try client.authenticate("juliet", "r0meo", mechanism: .plain)
        #expect(try client.bind("balcony").description == "juliet@localhost/balcony")
    }

    @Test func plainWithoutTLSIsEncryptionRequired() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>AGp1bGlldAByMG1lbw==</auth>")
        let failure = try client.receiveOne()
        #expect(failure.name == "failure")
        #expect(failure.elements.first?.name == "encryption-required")
        #expect(!client.isClosed)
    }

    @Test func wrongPasswordFailsAndTheStreamStaysOpenForARetry() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        #expect(throws: (any Error).self) { try client.authenticate("juliet", "wrong") }
        #expect(!client.isClosed)
        #expect(server.logLines.lines.contains { $0.contains("authentication failed (not-authorized)") })
        #expect(!server.logLines.lines.contains { $0.contains("r0meo") || $0.contains("wrong") }, "no password in logs")
        try client.authenticate("juliet", "r0meo")
    }

    @Test func unknownUserFailsLikeAWrongPassword() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        var scram = try SCRAMClient(mechanism: .scramSHA256, username: "nobody", secret: .password("x"))
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-256'>\(SASLPayload.encode(scram.clientFirstMessage))</auth>")
        let challenge = try client.receiveOne()
        #expect(challenge.name == "challenge", "an unknown user still gets a challenge")
        let final = try scram.receiveServerFirst(try Base64.decode(challenge.text))
        client.send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLPayload.encode(final))</response>")
        #expect(try client.receiveOne().elements.first?.name == "not-authorized")
    }

    @Test func tooManyFailuresEndTheStream() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        for _ in 0..<4 {
            #expect(throws: (any Error).self) { try client.authenticate("juliet", "wrong") }
            #expect(!client.isClosed)
        }
        #expect(throws: (any Error).self) { try client.authenticate("juliet", "wrong") }
        #expect(client.isClosed)
    }

    /// A server whose login throttles allow `perAddress` and `perAccount`
    /// failures a minute, answering one attempt per `60 s / limit` past them.
    private func throttledServer(perAddress: Int?, perAccount: Int?) throws -> TestServer {
        var config = ServerConfig()
        config.authentication.loginThrottle = perAddress.map { .init($0, per: .seconds(60)) }
        config.authentication.accountLoginThrottle = perAccount.map { .init($0, per: .seconds(60)) }
        let server = try TestServer(config: config)
        try server.addUser("juliet", password: "r0meo")
        try server.addUser("mallory", password: "mine")
        return server
    }

    /// Sends SCRAM-SHA-256's first message from a new connection from `host`.
    private func startLogin(
        _ server: TestServer, from host: String, as username: String, _ password: String
    ) throws -> (TestClient, SCRAMClient) {
        let client = server.connect(from: host)
        try client.openStream()
        let scram = try SCRAMClient(mechanism: .scramSHA256, username: username, secret: .password(password))
        client.send(
            "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-256'>"
                + SASLPayload.encode(scram.clientFirstMessage) + "</auth>")
        return (client, scram)
    }

    /// Answers the challenge the client has received; returns `success` or
    /// the failure's condition.
    private func finishLogin(_ client: TestClient, _ scram: inout SCRAMClient) throws -> String {
        let challenge = try client.receiveOne()
        guard challenge.name == "challenge" else { return challenge.elements.first?.name ?? challenge.name }
        let final = try scram.receiveServerFirst(try Base64.decode(challenge.text))
        client.send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLPayload.encode(final))</response>")
        let answer = try client.receiveOne()
        return answer.name == "success" ? "success" : answer.elements.first?.name ?? answer.name
    }

    /// One whole login from a new connection; returns its outcome as
    /// `finishLogin` does, failing if it is not answered at once.
    private func login(_ server: TestServer, from host: String, as username: String, _ password: String) throws
        -> String
    {
        var (client, scram) = try startLogin(server, from: host, as: username, password)
        return try finishLogin(client, &scram)
    }

    /// Past the limit the answer is late, not a refusal: another address is
    /// not affected, and the right password still logs in once the slot
    /// (60 s / 3 after the third failure) comes.
    @Test func failedLoginsDelayTheAddressButTheRightPasswordStillWorks() throws {
        let server = try throttledServer(perAddress: 3, perAccount: nil)
        for _ in 0..<3 { #expect(try login(server, from: "192.0.2.7", as: "juliet", "wrong") == "not-authorized") }
        var (client, scram) = try startLogin(server, from: "192.0.2.7", as: "juliet", "r0meo")
        #expect(client.receiveElements().isEmpty, "the answer waits for the address's slot")
        #expect(try login(server, from: "192.0.2.8", as: "juliet", "r0meo") == "success")
        server.loop.advance(by: .seconds(19))
        #expect(client.receiveElements().isEmpty)
        server.loop.advance(by: .seconds(1))
        #expect(try finishLogin(client, &scram) == "success")
        #expect(!client.isClosed)
    }

    /// Logging in to his own account between guesses does not clear the
    /// attacker's failures at his address.
    @Test func aSuccessDoesNotClearTheAddressesFailures() throws {
        let server = try throttledServer(perAddress: 3, perAccount: nil)
        for _ in 0..<3 {
            #expect(try login(server, from: "192.0.2.7", as: "mallory", "mine") == "success")
            #expect(try login(server, from: "192.0.2.7", as: "juliet", "guess") == "not-authorized")
        }
        let (client, _) = try startLogin(server, from: "192.0.2.7", as: "juliet", "guess")
        #expect(client.receiveElements().isEmpty, "the fourth guess is delayed")
    }

    /// Guesses at one account from many addresses add up; the owner's
    /// success clears them, and other accounts are not slowed.
    @Test func failuresCountPerAccountAndItsOwnSuccessClearsThem() throws {
        let server = try throttledServer(perAddress: nil, perAccount: 3)
        for index in 1...3 {
            #expect(try login(server, from: "192.0.2.\(index)", as: "juliet", "wrong") == "not-authorized")
        }
        #expect(try login(server, from: "192.0.2.9", as: "mallory", "mine") == "success")
        var (client, scram) = try startLogin(server, from: "198.51.100.1", as: "juliet", "r0meo")
        #expect(client.receiveElements().isEmpty, "the account is throttled from any address")
        server.loop.advance(by: .seconds(20))
        #expect(try finishLogin(client, &scram) == "success")
        #expect(try login(server, from: "192.0.2.1", as: "juliet", "wrong") == "not-authorized", "answered at once")
    }

    /// Parallel connections do not multiply a throttled address's rate: one
    /// attempt at a time waits for the next slot, others are turned away.
    @Test func parallelAttemptsDoNotShareASlot() throws {
        let server = try throttledServer(perAddress: 3, perAccount: nil)
        for _ in 0..<3 { #expect(try login(server, from: "192.0.2.7", as: "juliet", "wrong") == "not-authorized") }
        var (first, firstSCRAM) = try startLogin(server, from: "192.0.2.7", as: "juliet", "wrong")
        let (second, _) = try startLogin(server, from: "192.0.2.7", as: "juliet", "r0meo")
        #expect(first.receiveElements().isEmpty)
        #expect(try second.receiveOne().elements.first?.name == "temporary-auth-failure")
        server.loop.advance(by: .seconds(20))
        #expect(try finishLogin(first, &firstSCRAM) == "not-authorized")
        var (third, thirdSCRAM) = try startLogin(server, from: "192.0.2.7", as: "juliet", "r0meo")
        #expect(third.receiveElements().isEmpty, "the next slot is 20 s after the last")
        server.loop.advance(by: .seconds(20))
        #expect(try finishLogin(third, &thirdSCRAM) == "success")
    }

    @Test func abortCountsAsAFailedAttempt() throws {
        let server = try throttledServer(perAddress: 3, perAccount: nil)
        for _ in 0..<3 {
            let (client, _) = try startLogin(server, from: "192.0.2.7", as: "juliet", "r0meo")
            #expect(try client.receiveOne().name == "challenge")
            client.send("<abort xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
            #expect(try client.receiveOne().elements.first?.name == "aborted")
        }
        let (client, _) = try startLogin(server, from: "192.0.2.7", as: "juliet", "r0meo")
        #expect(client.receiveElements().isEmpty)
    }

    /// An IPv6 host changes the low 64 bits of its address at will.
    @Test func ipv6AddressesCountPerSlash64() throws {
        let server = try throttledServer(perAddress: 3, perAccount: nil)
        for (index, user) in ["juliet", "mallory", "nobody"].enumerated() {
            #expect(try login(server, from: "2001:db8::\(index + 1)", as: user, "wrong") == "not-authorized")
        }
        let (sameBlock, _) = try startLogin(server, from: "2001:db8::ffff", as: "juliet", "r0meo")
        #expect(sameBlock.receiveElements().isEmpty)
        #expect(try login(server, from: "2001:db8:0:1::1", as: "juliet", "r0meo") == "success")
    }

    /// The wait is the server's doing, so it does not count against the
    /// client's `handshake_timeout`.
    @Test func aThrottledLoginGetsItsWaitAddedToTheHandshakeTimeout() throws {
        let server = try throttledServer(perAddress: 1, perAccount: nil)
        #expect(try login(server, from: "192.0.2.7", as: "juliet", "wrong") == "not-authorized")
        server.loop.advance(by: .seconds(40))
        var (client, scram) = try startLogin(server, from: "192.0.2.7", as: "juliet", "r0meo")
        server.loop.advance(by: .seconds(20))  // the slot: 60 s after the failure
        #expect(try finishLogin(client, &scram) == "success")
        server.loop.advance(by: .seconds(29))
        try client.openStream()
        try client.bind()
        #expect(!client.isClosed)
    }

    @Test(arguments: [
        ("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='DIGEST-MD5'/>", "invalid-mechanism"),
        ("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>", "invalid-mechanism"),
        ("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>!!!notbase64</auth>", "incorrect-encoding"),
        ("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>Z2FyYmFnZQ==</auth>", "malformed-request"),
        ("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>Zm9v</response>", "malformed-request"),
        ("<abort xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>", "aborted"),
    ])
    func saslErrors(_ input: String, _ condition: String) throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        client.send(input)
        let failure = try client.receiveOne()
        #expect(failure.name == "failure")
        #expect(failure.elements.first?.name == condition)
        #expect(!client.isClosed)
    }

    @Test func authzidForAnotherUserIsInvalidAuthzid() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        var scram = try SCRAMClient(
            mechanism: .scramSHA1, username: "juliet", authorizationIdentity: "romeo@localhost",
            secret: .password("r0meo"))
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>\(SASLPayload.encode(scram.clientFirstMessage))</auth>")
        #expect(try client.receiveOne().elements.first?.name == "invalid-authzid")
        _ = scram
    }

    @Test func emptyAuthThenResponseCarriesTheInitialMessage() throws {
        let server = try serverWithJuliet()
        let client = server.connect()
        try client.openStream()
        var scram = try SCRAMClient(mechanism: .scramSHA1, username: "juliet", secret: .password("r0meo"))
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'/>")
        let empty = try client.receiveOne()
        #expect(empty.name == "challenge" && empty.text.isEmpty)
        client.send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLPayload.encode(scram.clientFirstMessage))</response>")
        let final = try scram.receiveServerFirst(try Base64.decode(client.receiveOne().text))
        client.send("<response xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>\(SASLPayload.encode(final))</response>")
        #expect(try client.receiveOne().name == "success")
    }
}
