import Testing

@testable import XMPPCore

/// SCRAM exchanges that succeed: the RFC examples byte for byte, and round
/// trips between our client and our server.
@Suite struct SASLSCRAMTests {
    struct Example: Sendable, CustomTestStringConvertible {
        var mechanism: SASLMechanism
        var clientNonce: String
        var serverNonce: String
        var salt: String
        var clientFirst: String
        var serverFirst: String
        var clientFinal: String
        var serverFinal: String
        var testDescription: String { mechanism.rawValue }
    }

    /// RFC 5802 §5 and RFC 7677 §3: user "user", password "pencil".
    static let examples = [
        Example(
            mechanism: .scramSHA1, clientNonce: "fyko+d2lbbFgONRv9qkxdawL",
            serverNonce: "3rfcNHYJY1ZVvWVs7j", salt: "QSXCR+Q6sek8bf92",
            clientFirst: "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL",
            serverFirst: "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
            clientFinal:
                "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
            serverFinal: "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="),
        Example(
            mechanism: .scramSHA256, clientNonce: "rOprNGfwEbeRWgbNEkqO",
            serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", salt: "W22ZaJ0SNY7soEsUEjb6gQ==",
            clientFirst: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
            serverFirst:
                "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            clientFinal:
                "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
            serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
    ]

    @Test(arguments: examples) func rfcExampleByteForByte(_ example: Example) throws {
        let hash = try #require(example.mechanism.scramHashFunction)
        let credentials = try SCRAMCredentials(
            password: "pencil", hashFunction: hash, salt: Base64.decode(example.salt),
            iterations: 4096)
        var client = try SCRAMClient(
            mechanism: example.mechanism, username: "user", authorizationIdentity: nil,
            secret: .password("pencil"), channelBinding: .unsupported,
            iterationRange: 4096...4096, clientNonce: example.clientNonce)
        var server = SCRAMServer(
            mechanism: example.mechanism, channelBindings: [:], unknownUserSecret: [1],
            unknownUserIterations: 4096, serverNonce: example.serverNonce)

        #expect(client.clientFirstMessage == Array(example.clientFirst.utf8))
        let identity = try server.receiveClientFirst(Array(example.clientFirst.utf8))
        #expect(identity == SASLIdentity(username: "user"))

        let serverFirst = server.challenge(credentials: credentials)
        #expect(serverFirst == Array(example.serverFirst.utf8))

        let clientFinal = try client.receiveServerFirst(Array(example.serverFirst.utf8))
        #expect(clientFinal == Array(example.clientFinal.utf8))

        let serverFinal = try server.receiveClientFinal(Array(example.clientFinal.utf8))
        #expect(serverFinal == Array(example.serverFinal.utf8))

        #expect(client.keys == nil)
        try client.receiveServerFinal(Array(example.serverFinal.utf8))
        let keys = try #require(client.keys)
        #expect(keys.salt == credentials.salt)
        #expect(hash.hash(keys.clientKey) == credentials.storedKey)
        #expect(keys.serverKey == credentials.serverKey)
    }

    /// Runs a whole exchange between our client and server with random nonces.
    static func login(
        _ client: inout SCRAMClient, _ server: inout SCRAMServer,
        credentials: SCRAMCredentials?
    ) throws -> SASLIdentity {
        let identity = try server.receiveClientFirst(client.clientFirstMessage)
        let clientFinal = try client.receiveServerFirst(server.challenge(credentials: credentials))
        try client.receiveServerFinal(server.receiveClientFinal(clientFinal))
        return identity
    }

    @Test(arguments: [SASLMechanism.scramSHA1, .scramSHA256])
    func roundTripWithPasswordThenSavedKeys(_ mechanism: SASLMechanism) throws {
        let hash = try #require(mechanism.scramHashFunction)
        let credentials = try SCRAMCredentials(password: "correct horse", hashFunction: hash)
        #expect(credentials.salt.count == SCRAMCredentials.saltByteCount)
        #expect(credentials.iterations == 4096)

        var client = try SCRAMClient(
            mechanism: mechanism, username: "Juliet", secret: .password("correct horse"))
        var server = SCRAMServer(mechanism: mechanism, unknownUserSecret: [7, 7, 7])
        let identity = try Self.login(&client, &server, credentials: credentials)
        #expect(identity.username == "juliet")
        let keys = try #require(client.keys)

        // The saved keys log in again; the password is no longer needed.
        var again = try SCRAMClient(mechanism: mechanism, username: "juliet", secret: .keys(keys))
        var secondServer = SCRAMServer(mechanism: mechanism, unknownUserSecret: [7, 7, 7])
        _ = try Self.login(&again, &secondServer, credentials: credentials)
        #expect(again.keys == keys)
    }

    @Test func savedKeysStopWorkingWhenTheSaltChanges() throws {
        let old = try SCRAMCredentials(password: "pw", hashFunction: .sha256)
        var client = try SCRAMClient(
            mechanism: .scramSHA256, username: "romeo", secret: .password("pw"))
        var server = SCRAMServer(mechanism: .scramSHA256, unknownUserSecret: [1])
        _ = try Self.login(&client, &server, credentials: old)
        let keys = try #require(client.keys)

        let changed = try SCRAMCredentials(password: "pw", hashFunction: .sha256)
        var stale = try SCRAMClient(mechanism: .scramSHA256, username: "romeo", secret: .keys(keys))
        var nextServer = SCRAMServer(mechanism: .scramSHA256, unknownUserSecret: [1])
        _ = try nextServer.receiveClientFirst(stale.clientFirstMessage)
        let serverFirst = nextServer.challenge(credentials: changed)
        #expect(throws: SASLClientError.savedKeysOutdated) {
            try stale.receiveServerFirst(serverFirst)
        }
    }

    @Test func usernamesWithCommaAndEqualsAreEscaped() throws {
        let credentials = try SCRAMCredentials(password: "pw", hashFunction: .sha1)
        var client = try SCRAMClient(
            mechanism: .scramSHA1, username: "a,b=c", authorizationIdentity: "x=y,z@example.com",
            secret: .password("pw"))
        #expect(
            String(decoding: client.clientFirstMessage, as: UTF8.self)
                .hasPrefix("n,a=x=3Dy=2Cz@example.com,n=a=2Cb=3Dc,r="))
        var server = SCRAMServer(mechanism: .scramSHA1, unknownUserSecret: [1])
        let identity = try Self.login(&client, &server, credentials: credentials)
        #expect(
            identity == SASLIdentity(username: "a,b=c", authorizationIdentity: "x=y,z@example.com"))
    }

    @Test func plusMechanismBindsToTheChannel() throws {
        let credentials = try SCRAMCredentials(password: "pw", hashFunction: .sha256)
        let binding: [UInt8] = Array(0..<32)
        var client = try SCRAMClient(
            mechanism: .scramSHA256Plus, username: "romeo", secret: .password("pw"),
            channelBinding: .bound(.tlsExporter, data: binding))
        #expect(client.clientFirstMessage.starts(with: "p=tls-exporter,,n=romeo,r=".utf8))
        var server = SCRAMServer(
            mechanism: .scramSHA256Plus, channelBindings: [.tlsExporter: binding],
            unknownUserSecret: [1])
        _ = try Self.login(&client, &server, credentials: credentials)
        #expect(client.keys != nil)
    }

    @Test func flagYIsAcceptedWhenNoPlusWasAdvertised() throws {
        let credentials = try SCRAMCredentials(password: "pw", hashFunction: .sha1)
        var client = try SCRAMClient(
            mechanism: .scramSHA1, username: "romeo", secret: .password("pw"),
            channelBinding: .notOfferedByServer)
        #expect(client.clientFirstMessage.starts(with: "y,,n=romeo,".utf8))
        var server = SCRAMServer(mechanism: .scramSHA1, unknownUserSecret: [1])
        _ = try Self.login(&client, &server, credentials: credentials)
        #expect(client.keys != nil)
    }

    @Test func credentialsCheckPlaintextPasswords() throws {
        let credentials = try SCRAMCredentials(password: "pencil", hashFunction: .sha1)
        #expect(credentials.matches(password: "pencil"))
        #expect(!credentials.matches(password: "Pencil"))
        #expect(!credentials.matches(password: ""))
    }

    @Test func storedCredentialsAreValidated() throws {
        let made = try SCRAMCredentials(password: "pw", hashFunction: .sha256)
        let restored = SCRAMCredentials(
            hashFunction: .sha256, salt: made.salt, iterations: made.iterations,
            storedKey: made.storedKey, serverKey: made.serverKey)
        #expect(restored == made)
        #expect(restored?.matches(password: "pw") == true)
        // A SHA-256 record with SHA-1-sized keys, an empty salt, zero iterations.
        #expect(
            SCRAMCredentials(
                hashFunction: .sha256, salt: made.salt, iterations: 4096,
                storedKey: Array(made.storedKey.prefix(20)), serverKey: made.serverKey) == nil)
        #expect(
            SCRAMCredentials(
                hashFunction: .sha256, salt: [], iterations: 4096,
                storedKey: made.storedKey, serverKey: made.serverKey) == nil)
        #expect(
            SCRAMCredentials(
                hashFunction: .sha256, salt: made.salt, iterations: 0,
                storedKey: made.storedKey, serverKey: made.serverKey) == nil)
    }

    @Test func secretsAreRedactedFromDescriptions() throws {
        let credentials = try SCRAMCredentials(password: "pw", hashFunction: .sha1)
        let key = Base64.encode(credentials.storedKey)
        for text in [String(describing: credentials), String(reflecting: credentials)] {
            #expect(text.contains("<redacted>"))
            #expect(!text.contains(key))
            #expect(!text.contains(String(describing: credentials.storedKey)))
        }
        var dumped = ""
        dump(credentials, to: &dumped)
        #expect(dumped.contains("iterations"))
        #expect(!dumped.contains("storedKey") && !dumped.contains("serverKey"))
        #expect(
            String(describing: SCRAMClient.Secret.password("hunter2")) == "password(<redacted>)")
        let client = try SCRAMClient(
            mechanism: .scramSHA1, username: "u", secret: .password("hunter2"))
        var clientDump = ""
        dump(client, to: &clientDump)
        #expect(!clientDump.contains("hunter2"))
        #expect(!String(reflecting: client).contains("hunter2"))
    }
}
