import COpenSSL
import Testing

@testable import XMPPCore

/// Handshakes and data between our own client and server sessions, in memory.
@Suite struct TLSSessionTests {
    @Test func handshakeThenDataBothWays() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .pinned(certificate.fingerprint)),
            certificate: certificate)
        #expect(pair.client.pendingOutputCount > 0, "ClientHello waits after init")
        #expect(pair.client.protocolVersion == nil && pair.client.cipherSuite == nil)
        pair.handshake()
        #expect(pair.client.protocolVersion == .tls1_3)
        #expect(pair.server.protocolVersion == .tls1_3)
        #expect(pair.client.cipherSuite == pair.server.cipherSuite)
        #expect(pair.client.cipherSuite?.hasPrefix("TLS_") == true)

        try pair.client.send(plaintext: Array("<stream:stream>".utf8))
        pair.run()
        #expect(pair.serverReceived == Array("<stream:stream>".utf8))
        try pair.server.send(plaintext: Array("<stream:features/>".utf8))
        pair.run()
        #expect(pair.clientReceived == Array("<stream:features/>".utf8))
        #expect(pair.clientError == nil && pair.serverError == nil)
    }

    /// 1 MiB from the client in uneven plaintext pieces, its ciphertext cut
    /// every 1000 bytes so records straddle deliveries; then 1 MiB back.
    @Test func oneMebibyteEachWayInPieces() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .insecureAcceptAny), certificate: certificate)
        pair.deliverySize = 1000
        pair.handshake()
        let data = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        for piece in data.chunks(of: 7001) {
            try pair.client.send(plaintext: piece)
            pair.run()
        }
        #expect(pair.serverReceived.count == data.count)
        #expect(pair.serverReceived == data)
        try pair.server.send(plaintext: data)
        let reply = pair.server.takeOutput()
        #expect(reply.count > data.count, "all records are waiting at once")
        for piece in reply.chunks(of: 4096) {
            pair.clientReceived += try pair.client.receive(ciphertext: piece)
        }
        #expect(pair.clientReceived == data)
    }

    /// XMPPFramework sends its stream header as soon as it starts TLS; the
    /// session holds it until the handshake completes.
    @Test func plaintextSentDuringTheHandshakeArrivesAfterIt() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .insecureAcceptAny), certificate: certificate)
        try pair.client.send(plaintext: Array("early".utf8))
        #expect(pair.client.pendingOutputCount > 0, "only the ClientHello so far")
        pair.handshake()
        #expect(pair.serverReceived == Array("early".utf8))
    }

    /// XMPPFramework on SecureTransport stops at TLS 1.2.
    @Test func tls12OnlyClientIsAccepted() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        var client = TLSConfiguration.client(verification: .pinned(certificate.fingerprint))
        client.maximumVersion = .tls1_2
        let pair = try TLSPair(client: client, certificate: certificate)
        pair.handshake()
        #expect(pair.server.protocolVersion == .tls1_2)
        #expect(pair.server.cipherSuite?.hasPrefix("ECDHE-ECDSA-") == true)
        #expect(
            pair.server.cipherSuite?.contains("GCM") == true
                || pair.server.cipherSuite?.contains("CHACHA") == true)
        try pair.client.send(plaintext: Array("hi".utf8))
        pair.run()
        #expect(pair.serverReceived == Array("hi".utf8))
    }

    @Test func tls11ClientIsRefused() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let server = TLSSession(
            context: try TLSContext(configuration: .server(certificate: certificate.source)))
        // Our API cannot go below TLS 1.2, so reconfigure the client's SSL_CTX
        // by hand: OpenSSL 3 needs security level 0 to offer TLS 1.1 at all,
        // and our cipher list holds TLS 1.2 suites only.
        let clientContext = try TLSContext(configuration: .client(verification: .insecureAcceptAny))
        #expect(SSL_CTX_set_cipher_list(clientContext.pointer, "DEFAULT:@SECLEVEL=0") == 1)
        #expect(swiftlet_SSL_CTX_set_min_proto_version(clientContext.pointer, TLS1_1_VERSION) == 1)
        #expect(swiftlet_SSL_CTX_set_max_proto_version(clientContext.pointer, TLS1_1_VERSION) == 1)
        let client = TLSSession(context: clientContext)
        let hello = client.takeOutput()
        #expect(hello.count > 5 && hello[0] == 22, "a ClientHello went out")
        #expect(throws: TLSError.self) { _ = try server.receive(ciphertext: hello) }
        do {
            _ = try server.receive(ciphertext: [])
            Issue.record("a failed session must keep failing")
        } catch {
            #expect(error.kind == .handshakeFailed)
            #expect(error.message.contains("unsupported protocol"), "\(error)")
        }
        #expect(!server.isHandshakeComplete)
        // The protocol_version alert reaches the client, which fails too.
        #expect(throws: TLSError.self) { _ = try client.receive(ciphertext: server.takeOutput()) }
    }

    @Test func garbageBeforeTheHandshakeIsAnErrorNotACrash() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let context = try TLSContext(configuration: .server(certificate: certificate.source))
        let inputs: [[UInt8]] = [
            Array("<?xml version='1.0'?><stream:stream to='localhost'>".utf8),
            Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8),
            [22, 3, 1, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 70_000),
            [22, 3, 3, 0, 4, 1, 0, 0, 0],
            Crypto.randomBytes(count: 4096),
        ]
        for input in inputs {
            let server = TLSSession(context: context)
            do {
                for piece in input.chunks(of: 100) { _ = try server.receive(ciphertext: piece) }
                Issue.record("accepted \(input.prefix(16))")
            } catch {
                #expect(error.kind == .handshakeFailed)
                #expect(!error.message.isEmpty)
            }
            #expect(ERR_peek_error() == 0, "the error queue was drained")
            // Other sessions on the same context are unaffected.
            let pair = try TLSPair(
                client: .client(verification: .insecureAcceptAny), certificate: certificate)
            pair.handshake()
        }
    }

    @Test func garbageAfterTheHandshakeIsAProtocolViolation() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .insecureAcceptAny), certificate: certificate)
        pair.handshake()
        // An application-data record whose contents are not ours.
        let record: [UInt8] = [23, 3, 3, 0, 64] + Crypto.randomBytes(count: 64)
        do {
            _ = try pair.server.receive(ciphertext: record)
            Issue.record("accepted a forged record")
        } catch {
            #expect(error.kind == .protocolViolation)
            #expect(error.message.contains("bad record mac"), "\(error)")
        }
        #expect(throws: TLSError.self) { try pair.server.send(plaintext: Array("x".utf8)) }
        let alert = pair.server.takeOutput()
        #expect(alert.count > 0, "a bad_record_mac alert for the peer")
        pair.server.close()
        #expect(pair.server.pendingOutputCount == 0, "no close_notify after a failure")
        do {
            _ = try pair.client.receive(ciphertext: alert)
            Issue.record("the alert went unnoticed")
        } catch {
            #expect(error.kind == .protocolViolation)
            #expect(error.message.contains("bad record mac"), "\(error)")
        }
    }

    @Test func closeNotifyIsSentAndRecognized() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .insecureAcceptAny), certificate: certificate)
        pair.handshake()
        try pair.client.send(plaintext: Array("</stream:stream>".utf8))
        pair.client.close()
        let closing = pair.client.takeOutput()
        #expect(closing.count > 0)
        #expect(try pair.server.receive(ciphertext: closing) == Array("</stream:stream>".utf8))
        #expect(pair.server.receivedCloseNotify)
        #expect(
            try pair.server.receive(ciphertext: Crypto.randomBytes(count: 50)).isEmpty,
            "ignored after close")
        #expect(!pair.client.receivedCloseNotify)
        pair.server.close()
        #expect(try pair.client.receive(ciphertext: pair.server.takeOutput()).isEmpty)
        #expect(pair.client.receivedCloseNotify)
        pair.client.close()
        #expect(pair.client.pendingOutputCount == 0, "close_notify is sent once")
        do {
            try pair.client.send(plaintext: Array("late".utf8))
            Issue.record("sent after close")
        } catch {
            #expect(error.kind == .alreadyClosed)
        }
    }

    @Test func closingBeforeTheHandshakeSendsNothing() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let server = TLSSession(
            context: try TLSContext(configuration: .server(certificate: certificate.source)))
        server.close()
        #expect(server.pendingOutputCount == 0)
        #expect(server.channelBindings.isEmpty)
    }
}
