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

    @Test func failedLoginsAreThrottledPerAddress() throws {
        var config = ServerConfig()
        config.authentication.loginThrottle = .init(3, per: .seconds(60))
        let server = try TestServer(config: config)
        try server.addUser("juliet", password: "r0meo")
        for _ in 0..<3 {
            let client = server.connect(from: "192.0.2.7")
            try client.openStream()
            #expect(throws: (any Error).self) { try client.authenticate("juliet", "wrong") }
        }
        let client = server.connect(from: "192.0.2.7")
        try client.openStream()
        client.send("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-1'>biwsbj1qdWxpZXQscj1hYmM=</auth>")
        #expect(try client.receiveOne().elements.first?.name == "temporary-auth-failure")
        // Another address is not affected, and the window passes.
        try server.connect(from: "192.0.2.8").login("juliet", "r0meo")
        server.loop.advance(by: .seconds(61))
        let later = server.connect(from: "192.0.2.7")
        try later.openStream()
        try later.authenticate("juliet", "r0meo")
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
