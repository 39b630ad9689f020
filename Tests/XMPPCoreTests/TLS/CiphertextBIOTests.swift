import COpenSSL
import Testing

@testable import XMPPCore

/// `CiphertextBIO` through OpenSSL's BIO calls, as `SSL *` uses it, and
/// sessions over it with ciphertext cut into the smallest pieces.
@Suite struct CiphertextBIOTests {
    /// Reads up to `capacity` bytes with `BIO_read_ex`; nil when it read
    /// nothing, which must come with the retry flag (wait, not end).
    private func read(_ network: CiphertextBIO, _ capacity: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: capacity)
        var count = 0
        guard BIO_read_ex(network.bio, &buffer, capacity, &count) == 1 else {
            #expect(count == 0)
            #expect(BIO_test_flags(network.bio, BIO_FLAGS_SHOULD_RETRY | BIO_FLAGS_READ) != 0)
            return nil
        }
        #expect(BIO_test_flags(network.bio, BIO_FLAGS_SHOULD_RETRY) == 0)
        return Array(buffer[..<count])
    }

    @Test func writesCollectInOrderUntilTaken() {
        let network = CiphertextBIO()
        #expect(network.takeOutput().isEmpty)
        for piece in [[1, 2, 3], [4], [5, 6]] as [[UInt8]] {
            var written = 0
            #expect(BIO_write_ex(network.bio, piece, piece.count, &written) == 1)
            #expect(written == piece.count)
        }
        #expect(BIO_ctrl_wpending(network.bio) == 6)
        #expect(BIO_ctrl(network.bio, BIO_CTRL_FLUSH, 0, nil) == 1)
        #expect(network.takeOutput() == [1, 2, 3, 4, 5, 6])
        #expect(network.pendingOutputCount == 0)
        #expect(network.takeOutput().isEmpty)
    }

    /// Input is read in place in pieces of any size; what is left unread
    /// when the call ends is kept and read first next time.
    @Test func partialReadsKeepTheRestForLater() throws {
        let network = CiphertextBIO()
        #expect(read(network, 4) == nil, "nothing to read")
        let first: [UInt8] = Array(0..<10)
        try first.withUnsafeBytes { bytes in
            try network.withInput(bytes) { () throws(TLSError) in
                #expect(BIO_ctrl_pending(network.bio) == 10)
                #expect(read(network, 3) == [0, 1, 2])
                #expect(read(network, 1) == [3])
            }
        }
        #expect(network.pendingInputCount == 6)
        let second: [UInt8] = [10, 11]
        try second.withUnsafeBytes { bytes in
            try network.withInput(bytes) { () throws(TLSError) in
                #expect(network.pendingInputCount == 8)
                #expect(read(network, 4) == [4, 5, 6, 7])
                #expect(read(network, 100) == [8, 9])
                #expect(read(network, 100) == [10, 11])
                #expect(read(network, 100) == nil)
            }
        }
        #expect(network.pendingInputCount == 0)
        #expect(read(network, 1) == nil, "input is readable only during withInput")
    }

    /// Handshake, data both ways and close_notify with every flight
    /// delivered one byte at a time: every record arrives in pieces.
    @Test func sessionsWorkOverOneByteDeliveries() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .insecureAcceptAny), certificate: certificate)
        pair.deliverySize = 1
        pair.handshake()
        let stanza = Array("<message><body>\(String(repeating: "x", count: 3000))</body></message>".utf8)
        try pair.client.send(plaintext: stanza)
        try pair.server.send(plaintext: stanza + stanza)
        pair.run()
        #expect(pair.serverReceived == stanza)
        #expect(pair.clientReceived == stanza + stanza)
        pair.client.close()
        pair.run()
        #expect(pair.server.receivedCloseNotify)
        #expect(pair.clientError == nil && pair.serverError == nil)
    }

    /// Two records and a close_notify in one delivery: the session reads
    /// the data, stops at the alert, and what follows stays unread.
    @Test func recordsInOneDeliveryAreAllRead() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .insecureAcceptAny), certificate: certificate)
        pair.handshake()
        try pair.client.send(plaintext: Array("one".utf8))
        try pair.client.send(plaintext: Array("two".utf8))
        pair.client.close()
        let flight = pair.client.takeOutput() + [23, 3, 3, 0, 1, 0]
        #expect(try pair.server.receive(ciphertext: flight) == Array("onetwo".utf8))
        #expect(pair.server.receivedCloseNotify)
    }
}
