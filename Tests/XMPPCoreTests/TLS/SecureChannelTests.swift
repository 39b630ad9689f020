import Testing

@testable import XMPPCore

/// `SecureChannel`: every record TLS produces reaches the output before the
/// call returns, the alert after a failure included.
@Suite struct SecureChannelTests {
    /// A client and a server channel whose outputs are collected as
    /// flights, for `run()` to deliver to the other side.
    final class Wire {
        var client: SecureChannel!
        var server: SecureChannel!
        var toServer: [[UInt8]] = []
        var toClient: [[UInt8]] = []
        var clientReceived: [UInt8] = []
        var serverReceived: [UInt8] = []

        init(certificate: SelfSignedCertificate) throws {
            let serverContext = try TLSContext(configuration: .server(certificate: certificate.source))
            let clientContext = try TLSContext(configuration: .client(verification: .pinned(certificate.fingerprint)))
            server = SecureChannel(TLSSession(context: serverContext)) { [unowned self] in toClient.append($0) }
            client = SecureChannel(TLSSession(context: clientContext)) { [unowned self] in toServer.append($0) }
        }

        /// Delivers flights both ways until none is left; nothing may stay
        /// behind in either session.
        func run() throws {
            while !toServer.isEmpty || !toClient.isEmpty {
                for flight in toServer.takeAll() { serverReceived += try flight.withUnsafeBytes { try server.receive($0) } }
                for flight in toClient.takeAll() { clientReceived += try flight.withUnsafeBytes { try client.receive($0) } }
                #expect(client.session.pendingOutputCount == 0 && server.session.pendingOutputCount == 0)
            }
        }
    }

    @Test func theHandshakeDataAndCloseNotifyReachTheOutput() throws {
        let wire = try Wire(certificate: try SelfSignedCertificate.generate(domain: "localhost"))
        #expect(wire.toServer.count == 1, "the ClientHello goes out at once")
        try wire.run()
        #expect(wire.client.session.isHandshakeComplete && wire.server.session.isHandshakeComplete)
        try wire.client.send(Array("<stream:stream>".utf8))
        try wire.run()
        #expect(wire.serverReceived == Array("<stream:stream>".utf8))
        try wire.server.send(Array("<stream:features/>".utf8))
        try wire.run()
        #expect(wire.clientReceived == Array("<stream:features/>".utf8))
        wire.server.close()
        try wire.run()
        #expect(wire.client.receivedCloseNotify)
    }

    @Test func theAlertAfterAFailureIsSentBeforeTheErrorIsThrown() throws {
        let wire = try Wire(certificate: try SelfSignedCertificate.generate(domain: "localhost"))
        try wire.run()
        let forged: [UInt8] = [23, 3, 3, 0, 64] + Crypto.randomBytes(count: 64)
        #expect(throws: TLSError.self) { try forged.withUnsafeBytes { try wire.server.receive($0) } }
        #expect(wire.toClient.count == 1, "a bad_record_mac alert for the peer")
        wire.server.close()
        #expect(wire.toClient.count == 1, "no close_notify after a failure")
    }
}

extension Array {
    /// Removes and returns every element.
    fileprivate mutating func takeAll() -> [Element] {
        defer { removeAll() }
        return self
    }
}
