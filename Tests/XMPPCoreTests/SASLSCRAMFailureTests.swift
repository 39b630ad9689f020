import Testing

@testable import XMPPCore

/// SCRAM exchanges that must fail, and with which condition.
@Suite struct SASLSCRAMFailureTests {
    static let secret: [UInt8] = Array("server secret".utf8)

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func server(
        _ mechanism: SASLMechanism = .scramSHA1,
        channelBindings: [ChannelBindingType: [UInt8]] = [:], nonce: String = "SERVERNONCE"
    ) -> SCRAMServer {
        SCRAMServer(
            mechanism: mechanism, channelBindings: channelBindings, unknownUserSecret: secret,
            unknownUserIterations: 4096, serverNonce: nonce)
    }

    /// RFC 5802 §5's credentials for "user"/"pencil".
    static func pencil() throws -> SCRAMCredentials {
        try SCRAMCredentials(
            password: "pencil", hashFunction: .sha1, salt: Base64.decode("QSXCR+Q6sek8bf92"),
            iterations: 4096)
    }

    /// A server that has answered `n,,n=user,r=CLIENT` with the user's challenge.
    static func challengedServer(nonce: String = "SERVERNONCE") throws -> SCRAMServer {
        var server = Self.server(nonce: nonce)
        _ = try server.receiveClientFirst(bytes("n,,n=user,r=CLIENT"))
        _ = server.challenge(credentials: try pencil())
        return server
    }

    /// A client-final message with a correct proof for `challengedServer`,
    /// made by our client.
    static func validClientFinal(serverNonce: String = "SERVERNONCE") throws -> [UInt8] {
        var client = try SCRAMClient(
            mechanism: .scramSHA1, username: "user", authorizationIdentity: nil,
            secret: .password("pencil"), channelBinding: .unsupported,
            iterationRange: 4096...4096, clientNonce: "CLIENT")
        var server = Self.server(nonce: serverNonce)
        _ = try server.receiveClientFirst(client.clientFirstMessage)
        return try client.receiveServerFirst(server.challenge(credentials: pencil()))
    }

    // MARK: Server, client-first

    @Test(arguments: [
        "p=tls-unique,,n=user,r=abc",  // p= when no -PLUS is offered
        "p=tls-exporter,,n=user,r=abc",
        "q,,n=user,r=abc",  // unknown flag
        "n,user,n=user,r=abc",  // authzid without a=
        "n,,m=ext,n=user,r=abc",  // mandatory extension
        "n,,r=abc,n=user",  // wrong order
        "n,,n=user",  // no nonce
        "n,,n=user,r=",  // empty nonce
        "n,,n=user,r=a b",  // nonce with a space
        "n,,n=,r=abc",  // empty username
        "n,,n=us=2Der,r=abc",  // =2D is not an escape
        "n,,n=us=2cer,r=abc",  // escapes are uppercase
        "n,,n=us=er,r=abc",  // bare =
        "n,,n=user=,r=abc",  // = at the end
        "n,,n=us er,r=abc",  // PRECIS: no spaces in usernames
        "n,a=,n=user,r=abc",  // empty authzid
        "n,,",  // no bare message
        "n,,n=user,r=abc,",  // empty trailing attribute
    ])
    func malformedClientFirstIsRefused(_ message: String) {
        var server = Self.server()
        #expect(throws: SASLFailure.malformedRequest) {
            try server.receiveClientFirst(Self.bytes(message))
        }
    }

    /// A localpart's bound (1023 bytes), before any PRECIS work.
    @Test func usernamesLongerThanALocalpartAreRefused() throws {
        var server = Self.server()
        #expect(throws: SASLFailure.malformedRequest) {
            try server.receiveClientFirst(Self.bytes("n,,n=" + String(repeating: "\u{0660}", count: 512) + ",r=abc"))
        }
        var atTheBound = Self.server()
        let identity = try atTheBound.receiveClientFirst(
            Self.bytes("n,,n=" + String(repeating: "\u{0660}", count: 511) + "a,r=abc"))
        #expect(identity.username.utf8.count == 1023)
    }

    @Test func invalidUTF8AndNULInUsernamesAreRefused() {
        for message in [
            Self.bytes("n,,n=") + [0xC3, 0x28] + Self.bytes(",r=abc"),
            Self.bytes("n,,n=us") + [0] + Self.bytes("er,r=abc"),
        ] {
            var server = Self.server()
            #expect(throws: SASLFailure.malformedRequest) { try server.receiveClientFirst(message) }
        }
    }

    @Test func plusMechanismRequiresASupportedBinding() {
        let bindings: [ChannelBindingType: [UInt8]] = [.tlsExporter: [1, 2, 3]]
        for message in [
            "n,,n=user,r=abc", "y,,n=user,r=abc", "p=tls-unique,,n=user,r=abc",
            "p=no-such-type,,n=user,r=abc",
        ] {
            var server = Self.server(.scramSHA1Plus, channelBindings: bindings)
            #expect(throws: SASLFailure.malformedRequest) {
                try server.receiveClientFirst(Self.bytes(message))
            }
        }
    }

    @Test func flagYIsADowngradeWhenPlusWasAdvertised() {
        var server = Self.server(channelBindings: [.tlsExporter: [1, 2, 3]])
        #expect(throws: SASLFailure.notAuthorized) {
            try server.receiveClientFirst(Self.bytes("y,,n=user,r=abc"))
        }
    }

    // MARK: Server, client-final

    @Test func validProofIsAcceptedSoTheFailuresBelowMeanSomething() throws {
        var server = try Self.challengedServer()
        let serverFinal = try server.receiveClientFinal(Self.validClientFinal())
        #expect(serverFinal.starts(with: "v=".utf8))
    }

    @Test func wrongPasswordIsNotAuthorized() throws {
        var client = try SCRAMClient(
            mechanism: .scramSHA1, username: "user", secret: .password("pencil!"))
        var server = Self.server()
        _ = try server.receiveClientFirst(client.clientFirstMessage)
        let clientFinal = try client.receiveServerFirst(
            server.challenge(credentials: Self.pencil()))
        #expect(throws: SASLFailure.notAuthorized) { try server.receiveClientFinal(clientFinal) }
    }

    @Test func alteredProofIsNotAuthorized() throws {
        var message = try Self.validClientFinal()
        // Flip one base64 character of the proof, keeping it valid base64.
        let index = message.count - 5
        message[index] = message[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        var server = try Self.challengedServer()
        #expect(throws: SASLFailure.notAuthorized) { try server.receiveClientFinal(message) }
    }

    @Test func alteredNonceIsNotAuthorized() throws {
        let valid = String(decoding: try Self.validClientFinal(), as: UTF8.self)
        for altered in [
            valid.replacingFirst("r=CLIENTSERVERNONCE", with: "r=CLIENTSERVERNONCF"),
            valid.replacingFirst("r=CLIENTSERVERNONCE", with: "r=CLIENTSERVERNONCEX"),
            valid.replacingFirst("r=CLIENTSERVERNONCE", with: "r=CLIENT"),
        ] {
            #expect(altered != valid)
            var server = try Self.challengedServer()
            #expect(throws: SASLFailure.notAuthorized) {
                try server.receiveClientFinal(Self.bytes(altered))
            }
        }
    }

    /// Signs `withoutProof` for `challengedServer` with the right password, as
    /// a client that knows it but breaks the protocol would.
    static func signed(_ withoutProof: String) throws -> [UInt8] {
        let keys = SCRAMClientKeys(
            preparedPassword: "pencil", hashFunction: .sha1,
            salt: try Base64.decode("QSXCR+Q6sek8bf92"), iterations: 4096)
        let authMessage = bytes(
            "n=user,r=CLIENT,r=CLIENTSERVERNONCE,s=QSXCR+Q6sek8bf92,i=4096,\(withoutProof)")
        let signature = HashFunction.sha1.hmac(
            key: HashFunction.sha1.hash(keys.clientKey), message: authMessage)
        let proof = zip(keys.clientKey, signature).map { $0 ^ $1 }
        return bytes("\(withoutProof),p=\(Base64.encode(proof))")
    }

    @Test func correctlySignedMessagesWithWrongNonceOrBindingAreNotAuthorized() throws {
        // The signing helper is right: the honest message passes.
        var honest = try Self.challengedServer()
        _ = try honest.receiveClientFinal(Self.signed("c=biws,r=CLIENTSERVERNONCE"))
        // The proof is valid for each of these, so only the nonce and c= checks refuse them.
        for withoutProof in [
            "c=biws,r=CLIENTSERVERNONCF", "c=biws,r=CLIENTOTHERNONCE", "c=biws,r=CLIENT",
            "c=eSws,r=CLIENTSERVERNONCE", "c=cD10bHMtdW5pcXVlLCw=,r=CLIENTSERVERNONCE",
        ] {
            var server = try Self.challengedServer()
            #expect(throws: SASLFailure.notAuthorized) {
                try server.receiveClientFinal(Self.signed(withoutProof))
            }
        }
    }

    @Test func replayedClientFinalIsNotAuthorized() throws {
        // Recorded against one server nonce, replayed to an exchange with another.
        let recorded = try Self.validClientFinal(serverNonce: "FIRSTNONCE")
        var server = try Self.challengedServer(nonce: "SECONDNONCE")
        #expect(throws: SASLFailure.notAuthorized) { try server.receiveClientFinal(recorded) }
    }

    @Test func channelBindingMismatchIsNotAuthorized() throws {
        let valid = String(decoding: try Self.validClientFinal(), as: UTF8.self)
        // "eSws" is base64 of "y,," where the client-first said "n,,".
        for altered in [
            valid.replacingFirst("c=biws", with: "c=eSws"),
            valid.replacingFirst("c=biws", with: "c="),
        ] {
            var server = try Self.challengedServer()
            #expect(throws: SASLFailure.notAuthorized) {
                try server.receiveClientFinal(Self.bytes(altered))
            }
        }
    }

    @Test func plusBindingDataMismatchIsNotAuthorized() throws {
        let credentials = try SCRAMCredentials(password: "pw", hashFunction: .sha256)
        var client = try SCRAMClient(
            mechanism: .scramSHA256Plus, username: "romeo", secret: .password("pw"),
            channelBinding: .bound(.tlsExporter, data: [1, 2, 3]))
        var server = SCRAMServer(
            mechanism: .scramSHA256Plus, channelBindings: [.tlsExporter: [1, 2, 4]],
            unknownUserSecret: Self.secret)
        _ = try server.receiveClientFirst(client.clientFirstMessage)
        let clientFinal = try client.receiveServerFirst(server.challenge(credentials: credentials))
        #expect(throws: SASLFailure.notAuthorized) { try server.receiveClientFinal(clientFinal) }
    }

    @Test func invalidBase64IsIncorrectEncoding() throws {
        let valid = String(decoding: try Self.validClientFinal(), as: UTF8.self)
        for altered in [
            valid.replacingFirst("c=biws", with: "c=biw*"),
            valid.replacingFirst("c=biws", with: "c=biw"), valid + "=",
            valid.replacingFirst("p=", with: "p=!"),
        ] {
            var server = try Self.challengedServer()
            #expect(throws: SASLFailure.incorrectEncoding) {
                try server.receiveClientFinal(Self.bytes(altered))
            }
        }
        #expect(throws: SASLFailure.incorrectEncoding) { try SASLPayload.decode("bi ws") }
        #expect(throws: SASLFailure.incorrectEncoding) { try SASLPayload.decode("biw") }
    }

    @Test(arguments: [
        "r=CLIENTSERVERNONCE,c=biws,p=AAAA",  // wrong order
        "c=biws,r=CLIENTSERVERNONCE",  // no proof
        "c=biws,r=CLIENTSERVERNONCE,p=AAAA,x=1",  // proof not last
        "c=biws,r=CLIENTSERVERNONCE,,p=AAAA",  // empty attribute
    ])
    func malformedClientFinalIsRefused(_ message: String) throws {
        var server = try Self.challengedServer()
        #expect(throws: SASLFailure.malformedRequest) {
            try server.receiveClientFinal(Self.bytes(message))
        }
    }

    @Test func unknownUserFailsOnlyAtTheEnd() throws {
        var client = try SCRAMClient(
            mechanism: .scramSHA1, username: "nobody", secret: .password("guess"))
        var server = Self.server()
        let identity = try server.receiveClientFirst(client.clientFirstMessage)
        #expect(identity.username == "nobody")
        let serverFirst = server.challenge(credentials: nil)

        // A challenge shaped like a real one: our nonce extended, a 16-byte salt, i=4096.
        let parts = String(decoding: serverFirst, as: UTF8.self).split(separator: ",")
        #expect(parts.count == 3)
        #expect(parts[2] == "i=4096")
        let salt = try Base64.decode(String(parts[1].dropFirst(2)))
        #expect(salt.count == SCRAMCredentials.saltByteCount)

        // The client cannot tell: it answers, and only the final step fails.
        let clientFinal = try client.receiveServerFirst(serverFirst)
        #expect(throws: SASLFailure.notAuthorized) { try server.receiveClientFinal(clientFinal) }

        // The salt is stable per user and secret, and differs between users.
        var again = Self.server()
        _ = try again.receiveClientFirst(Self.bytes("n,,n=nobody,r=other"))
        #expect(
            again.challenge(credentials: nil).split(separator: UInt8(ascii: ","))[1]
                == serverFirst.split(separator: UInt8(ascii: ","))[1])
        // Like a real account's, it is the same for the -PLUS variant.
        var plus = Self.server(.scramSHA1Plus, channelBindings: [.tlsExporter: [1]])
        _ = try plus.receiveClientFirst(Self.bytes("p=tls-exporter,,n=nobody,r=other"))
        #expect(
            plus.challenge(credentials: nil).split(separator: UInt8(ascii: ","))[1]
                == serverFirst.split(separator: UInt8(ascii: ","))[1])
        var other = Self.server()
        _ = try other.receiveClientFirst(Self.bytes("n,,n=somebody,r=other"))
        #expect(
            other.challenge(credentials: nil).split(separator: UInt8(ascii: ","))[1]
                != serverFirst.split(separator: UInt8(ascii: ","))[1])
    }

    @Test func messagesAfterTheEndAreRefused() throws {
        var server = try Self.challengedServer()
        let clientFinal = try Self.validClientFinal()
        _ = try server.receiveClientFinal(clientFinal)
        #expect(throws: SASLFailure.malformedRequest) { try server.receiveClientFinal(clientFinal) }
        #expect(throws: SASLFailure.malformedRequest) {
            try server.receiveClientFirst(Self.bytes("n,,n=user,r=abc"))
        }
    }

    // MARK: Client

    /// A client for "user"/"pencil" with nonce "CLIENT" and the default range.
    static func client() throws -> SCRAMClient {
        try SCRAMClient(
            mechanism: .scramSHA1, username: "user", authorizationIdentity: nil,
            secret: .password("pencil"), channelBinding: .unsupported,
            iterationRange: SCRAMCredentials
                .minimumIterations...SCRAMClient.defaultMaximumIterations,
            clientNonce: "CLIENT")
    }

    @Test func clientRefusesTooFewOrTooManyIterations() throws {
        var client = try Self.client()
        #expect(throws: SASLClientError.iterationCountTooLow(4095)) {
            try client.receiveServerFirst(Self.bytes("r=CLIENTxyz,s=QSXCR+Q6sek8bf92,i=4095"))
        }
        client = try Self.client()
        #expect(throws: SASLClientError.iterationCountTooHigh(1_000_001)) {
            try client.receiveServerFirst(Self.bytes("r=CLIENTxyz,s=QSXCR+Q6sek8bf92,i=1000001"))
        }
    }

    @Test(arguments: [
        "r=OTHERxyz,s=QSXCR+Q6sek8bf92,i=4096",  // not our nonce
        "r=CLIENT,s=QSXCR+Q6sek8bf92,i=4096",  // no server part
        "r=CLIENxyz,s=QSXCR+Q6sek8bf92,i=4096",
    ])
    func clientRefusesForeignNonces(_ message: String) throws {
        var client = try Self.client()
        #expect(throws: SASLClientError.nonceMismatch) {
            try client.receiveServerFirst(Self.bytes(message))
        }
    }

    @Test(arguments: [
        "r=CLIENTxyz,s=QSXCR+Q6sek8bf9,i=4096",  // salt not base64
        "r=CLIENTxyz,s=,i=4096",  // empty salt
        "r=CLIENTxyz,s=QSXCR+Q6sek8bf92,i=04096",  // leading zero
        "r=CLIENTxyz,s=QSXCR+Q6sek8bf92,i=-4096",
        "r=CLIENTxyz,s=QSXCR+Q6sek8bf92,i=99999999999",
        "m=ext,r=CLIENTxyz,s=QSXCR+Q6sek8bf92,i=4096",  // mandatory extension
        "r=CLIENTxyz,i=4096,s=QSXCR+Q6sek8bf92",  // wrong order
        "e=other-error",
    ])
    func clientRefusesMalformedServerFirst(_ message: String) throws {
        var client = try Self.client()
        #expect(throws: SASLClientError.malformedServerMessage) {
            try client.receiveServerFirst(Self.bytes(message))
        }
    }

    /// A client that has answered the RFC 5802-style challenge for nonce "CLIENT".
    static func answeredClient() throws -> SCRAMClient {
        var client = try Self.client()
        _ = try client.receiveServerFirst(
            Self.bytes("r=CLIENTSERVERNONCE,s=QSXCR+Q6sek8bf92,i=4096"))
        return client
    }

    @Test func clientRefusesAWrongServerSignature() throws {
        var server = try Self.challengedServer()
        let genuine = try server.receiveClientFinal(Self.validClientFinal())
        var client = try Self.answeredClient()
        var forged = genuine
        forged[2] = forged[2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: SASLClientError.serverSignatureMismatch) {
            try client.receiveServerFinal(forged)
        }
        #expect(client.keys == nil)

        // The genuine signature passes, so the refusal above is about the bytes.
        client = try Self.answeredClient()
        try client.receiveServerFinal(genuine)
        #expect(client.keys != nil)
    }

    @Test func clientReportsServerErrors() throws {
        var client = try Self.answeredClient()
        #expect(throws: SASLClientError.serverError("invalid-proof")) {
            try client.receiveServerFinal(Self.bytes("e=invalid-proof"))
        }
        client = try Self.answeredClient()
        #expect(throws: SASLClientError.malformedServerMessage) {
            try client.receiveServerFinal(Self.bytes("v=not*base64"))
        }
    }

    @Test func clientRefusesMessagesOutOfOrder() throws {
        var client = try Self.client()
        #expect(throws: SASLClientError.unexpectedServerMessage) {
            try client.receiveServerFinal(Self.bytes("v=rmF9pqV8S7suAoZWja4dJRkFsKQ="))
        }
        client = try Self.answeredClient()
        #expect(throws: SASLClientError.unexpectedServerMessage) {
            try client.receiveServerFirst(Self.bytes("r=CLIENTxyz,s=QSXCR+Q6sek8bf92,i=4096"))
        }
    }

    @Test func clientRefusesUnpreparableUsernamesAndPasswords() {
        #expect(throws: SASLClientError.invalidPassword) {
            try SCRAMClient(mechanism: .scramSHA1, username: "user", secret: .password(""))
        }
        #expect(throws: SASLClientError.invalidUsername) {
            try SCRAMClient(mechanism: .scramSHA1, username: "us er", secret: .password("pw"))
        }
    }
}

extension String {
    /// This string with the first occurrence of `target` replaced; tests only.
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}
