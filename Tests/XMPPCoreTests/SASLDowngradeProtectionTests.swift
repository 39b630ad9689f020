import Testing

@testable import XMPPCore

/// XEP-0474: the `h=` attribute, the XEP's own example byte for byte, and
/// our client catching a trimmed advertisement.
@Suite struct SASLDowngradeProtectionTests {
    static let advertisement = SCRAMDowngradeProtection.Advertisement(
        mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], channelBindings: ["tls-server-end-point", "tls-exporter"])

    @Test func hashSortsBothListsAndSeparatesThem() {
        // XEP-0474 §5: SHA-1 of
        // "SCRAM-SHA-1\x1eSCRAM-SHA-1-PLUS\x1ftls-exporter\x1etls-server-end-point".
        #expect(SCRAMDowngradeProtection.hash(of: Self.advertisement, using: .sha1) == "G6k/rBLDqgOhRRaCuuatSDFkJ08=")
        let withoutBindings = SCRAMDowngradeProtection.Advertisement(
            mechanisms: ["SCRAM-SHA-1", "SCRAM-SHA-1-PLUS"], channelBindings: nil)
        #expect(
            SCRAMDowngradeProtection.hash(of: withoutBindings, using: .sha1)
                == Base64.encode(HashFunction.sha1.hash(Array("SCRAM-SHA-1\u{1E}SCRAM-SHA-1-PLUS".utf8))))
    }

    /// XEP-0474 §5's full example: SCRAM-SHA-1-PLUS over tls-exporter with
    /// the fake binding data "THIS IS FAKE CB DATA", password "pencil", and
    /// a client-final message carrying an extension (`x=`) before the proof.
    @Test func xepExampleByteForByte() throws {
        let clientFirst = "p=tls-exporter,,n=user,r=12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6"
        let binding = Array("THIS IS FAKE CB DATA".utf8)
        var server = SCRAMServer(
            mechanism: .scramSHA1Plus, channelBindings: [.tlsExporter: binding], unknownUserSecret: [1],
            unknownUserIterations: 4096, serverNonce: "a09117a6-ac50-4f2f-93f1-93799c2bddf6",
            advertisement: Self.advertisement)
        _ = try server.receiveClientFirst(Array(clientFirst.utf8))
        let credentials = try SCRAMCredentials(
            password: "pencil", hashFunction: .sha1, salt: Base64.decode("QSXCR+Q6sek8bf92"), iterations: 4096)
        let serverFirst = server.challenge(credentials: credentials)
        #expect(
            String(decoding: serverFirst, as: UTF8.self)
                == "r=12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6a09117a6-ac50-4f2f-93f1-93799c2bddf6,s=QSXCR+Q6sek8bf92,i=4096,h=G6k/rBLDqgOhRRaCuuatSDFkJ08="
        )
        let clientFinal =
            "c=cD10bHMtZXhwb3J0ZXIsLFRISVMgSVMgRkFLRSBDQiBEQVRB,r=12C4CD5C-E38E-4A98-8F6D-15C38F51CCC6a09117a6-ac50-4f2f-93f1-93799c2bddf6,x=19C6532F-1CF4-4A27-A18D-DC9CEA41BBB3,p=M/SIDjT+dfcxUh89jZEypRvFxB4="
        let serverFinal = try server.receiveClientFinal(Array(clientFinal.utf8))
        #expect(String(decoding: serverFinal, as: UTF8.self) == "v=MQrMPvv7yv4x4Cq4W4Ih25EqS2c=")
    }

    @Test func clientAcceptsMatchingHashAndRefusesAnotherList() throws {
        for (seen, accepted) in [(Self.advertisement, true), (.init(mechanisms: ["SCRAM-SHA-1"], channelBindings: nil), false)] {
            var client = try SCRAMClient(
                mechanism: .scramSHA1, username: "user", secret: .password("pencil"), channelBinding: .notOfferedByServer)
            client.advertisement = seen
            var server = SCRAMServer(
                mechanism: .scramSHA1, channelBindings: [:], unknownUserSecret: [1], advertisement: Self.advertisement)
            _ = try server.receiveClientFirst(client.clientFirstMessage)
            let serverFirst = server.challenge(credentials: try SCRAMCredentials(password: "pencil", hashFunction: .sha1))
            if accepted {
                _ = try client.receiveServerFirst(serverFirst)
                #expect(client.advertisementVerified)
            } else {
                #expect(throws: SASLClientError.downgradeDetected) { try client.receiveServerFirst(serverFirst) }
            }
        }
    }

    @Test func clientWithoutAdvertisementIgnoresTheHash() throws {
        var client = try SCRAMClient(mechanism: .scramSHA256, username: "user", secret: .password("pencil"))
        var server = SCRAMServer(
            mechanism: .scramSHA256, unknownUserSecret: [1], advertisement: Self.advertisement)
        _ = try server.receiveClientFirst(client.clientFirstMessage)
        let serverFirst = server.challenge(credentials: try SCRAMCredentials(password: "pencil", hashFunction: .sha256))
        let clientFinal = try client.receiveServerFirst(serverFirst)
        try client.receiveServerFinal(try server.receiveClientFinal(clientFinal))
        #expect(!client.advertisementVerified)
    }
}

/// Hashed Token messages (XEP-0484's mechanisms), against values computed
/// independently with Python's `hmac` module.
@Suite struct HashedTokenTests {
    static let token = Array("WXZzciBwYmFmdmZnZiBqdmd1IGp2eXFhcmZm".utf8)

    @Test func initiatorAndResponderMessages() throws {
        let initiator = HashedToken.initiatorMessage(.sha256None, username: "user", token: Self.token, channelBinding: [])
        #expect(initiator.prefix(5) == Array("user\0".utf8)[...])
        #expect(Hex.encode(Array(initiator.dropFirst(5))) == "9097787461a184e0fa84ec00c1381190b6c4d16a8ec4453c7b2ac5e7fcf935ed")
        let responder = HashedToken.responderMessage(.sha256Exporter, token: Self.token, channelBinding: Array(0..<32))
        #expect(Hex.encode(responder) == "1260579b34d55aeba4e43062a412db609a0a7153abd218b0f148445c4e83529f")
    }

    @Test func parseAndVerify() throws {
        let binding = Array(repeating: UInt8(9), count: 32)
        let message = HashedToken.initiatorMessage(.sha256ServerEndPoint, username: "Juliet", token: Self.token, channelBinding: binding)
        let (username, proof) = try HashedToken.parseInitiator(message, .sha256ServerEndPoint)
        #expect(username == "juliet")
        #expect(HashedToken.verify(proof, .sha256ServerEndPoint, token: Self.token, channelBinding: binding))
        #expect(!HashedToken.verify(proof, .sha256ServerEndPoint, token: Self.token, channelBinding: []))
        #expect(!HashedToken.verify(proof, .sha256ServerEndPoint, token: Array("other".utf8), channelBinding: binding))
    }

    @Test(arguments: [
        Array("user".utf8), Array("user\0short".utf8), [0] + Array(repeating: 1, count: 32), Array("\u{7}\0".utf8) + Array(repeating: 1, count: 32),
    ])
    func malformedInitiatorMessages(_ message: [UInt8]) {
        #expect(throws: SASLFailure.malformedRequest) { try HashedToken.parseInitiator(message, .sha256None) }
    }
}
