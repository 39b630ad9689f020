import COpenSSL
import Testing

@testable import XMPPCore

/// Resumption by session ticket against our server sessions, and the
/// channel bindings of a resumed session (RFC 9266, RFC 5929).
@Suite struct SessionResumptionTests {
    static let certificate = try! SelfSignedCertificate.generate(domain: "localhost")

    func clientContext(maximum: TLSVersion) throws -> TLSContext {
        var configuration = TLSConfiguration.client(verification: .insecureAcceptAny)
        configuration.maximumVersion = maximum
        return try TLSContext(configuration: configuration)
    }

    func serverContext(alpn: [String] = []) throws -> TLSContext {
        var configuration = TLSConfiguration.server(certificate: Self.certificate.source)
        configuration.applicationProtocols = alpn
        return try TLSContext(configuration: configuration)
    }

    /// SHA-256 of the certificate's DER, which RFC 5929 §4.1 makes the
    /// `tls-server-end-point` binding of a certificate signed with SHA-256.
    func endPointHash(of certificate: OpaquePointer) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        #expect(X509_digest(certificate, EVP_sha256(), &digest, &length) == 1)
        return Array(digest.prefix(Int(length)))
    }

    @Test(arguments: [TLSVersion.tls1_3, .tls1_2])
    func theSecondConnectionResumesWithItsOwnBindings(version: TLSVersion) throws {
        let server = try serverContext()
        let client = try clientContext(maximum: version)

        let first = RawTLSClient(context: client, resuming: nil)
        let firstServer = TLSSession(context: server)
        try first.handshake(with: firstServer)
        #expect(firstServer.protocolVersion == version)
        #expect(SSL_session_reused(firstServer.ssl) == 0)
        let ticket = try #require(first.closeKeepingSession())
        defer { SSL_SESSION_free(ticket) }
        #expect(SSL_SESSION_has_ticket(ticket) == 1)

        let second = RawTLSClient(context: client, resuming: ticket)
        let secondServer = TLSSession(context: server)
        try second.handshake(with: secondServer)
        #expect(SSL_session_reused(secondServer.ssl) == 1)
        #expect(SSL_session_reused(second.ssl) == 1)
        #expect(secondServer.protocolVersion == version)

        // tls-server-end-point: still the server certificate's hash, on
        // both sides, though no certificate was sent this time.
        let expected = try Self.certificate.withX509 { endPointHash(of: $0) }
        #expect(secondServer.channelBindingData(for: .tlsServerEndPoint) == expected)
        let peer = try #require(SSL_get0_peer_certificate(second.ssl))
        #expect(endPointHash(of: peer) == expected)

        // tls-exporter: agreed by both sides, and new for this connection
        // (RFC 9266 §3: TLS 1.3, or TLS 1.2 with the extended master secret).
        if version == .tls1_2 { #expect(swiftlet_SSL_get_extms_support(secondServer.ssl) == 1) }
        let exporter = try #require(secondServer.channelBindingData(for: .tlsExporter))
        #expect(second.exporterBinding() == exporter)
        #expect(firstServer.channelBindingData(for: .tlsExporter) != exporter)
    }

    /// The ticket keys belong to the process: a ticket from one context
    /// resumes on another built alike (the STARTTLS and direct TLS
    /// listeners, a context built later), but not on one with other ALPN
    /// IDs (the HTTPS listener's), where a full handshake follows.
    @Test(arguments: [(["xmpp-client"], true), (["http/1.1"], false)])
    func aTicketResumesOnAnotherContextWithTheSameProtocols(ticketFrom alpn: [String], resumes: Bool) throws {
        let client = try clientContext(maximum: .tls1_3)
        let ticket = try Self.ticket(from: try serverContext(alpn: alpn), client: client)
        defer { SSL_SESSION_free(ticket) }

        let resuming = RawTLSClient(context: client, resuming: ticket)
        let server = TLSSession(context: try serverContext(alpn: ["xmpp-client"]))
        try resuming.handshake(with: server)
        #expect(server.isHandshakeComplete)
        #expect(SSL_session_reused(server.ssl) == (resumes ? 1 : 0))
    }

    /// One full handshake against `server`; returns the client's session
    /// with its ticket (owned by the caller).
    static func ticket(from server: TLSContext, client: TLSContext) throws -> OpaquePointer {
        let connection = RawTLSClient(context: client, resuming: nil)
        try connection.handshake(with: TLSSession(context: server))
        return try #require(connection.closeKeepingSession())
    }
}

/// A client connection driven with OpenSSL directly: ``TLSSession`` sends
/// its ClientHello as it is made, with no session to offer for resumption.
final class RawTLSClient {
    let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer

    init(context: TLSContext, resuming session: OpaquePointer?) {
        ssl = SSL_new(context.pointer)!
        input = BIO_new(BIO_s_mem())!
        output = BIO_new(BIO_s_mem())!
        _ = BIO_ctrl(input, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)  // BIO_set_mem_eof_return
        SSL_set_bio(ssl, input, output)
        SSL_set_connect_state(ssl)
        if let session { #expect(SSL_set_session(ssl, session) == 1) }
    }

    deinit {
        SSL_free(ssl)
    }

    /// Runs the handshake with `server`, then reads what the server sent
    /// after it (the session tickets).
    func handshake(with server: TLSSession) throws {
        for _ in 0..<10 {
            _ = SSL_do_handshake(ssl)
            _ = try server.receive(ciphertext: pending())
            let reply = server.takeOutput()
            #expect(BIO_write(input, reply, Int32(reply.count)) == Int32(reply.count) || reply.isEmpty)
            if SSL_is_init_finished(ssl) == 1, server.isHandshakeComplete, reply.isEmpty { break }
        }
        var byte: UInt8 = 0
        #expect(SSL_read(ssl, &byte, 1) <= 0, "nothing but tickets after the handshake")
        #expect(SSL_is_init_finished(ssl) == 1 && server.isHandshakeComplete)
    }

    /// The `tls-exporter` binding as this side computes it (RFC 9266 §2).
    func exporterBinding() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        let label = Array("EXPORTER-Channel-Binding".utf8)
        var empty: UInt8 = 0
        #expect(SSL_export_keying_material(ssl, &output, 32, label, label.count, &empty, 0, 1) == 1)
        return output
    }

    /// Sends close_notify, so that the session stays resumable, and returns
    /// it (owned by the caller).
    func closeKeepingSession() -> OpaquePointer? {
        _ = SSL_shutdown(ssl)
        return SSL_get1_session(ssl)
    }

    /// Ciphertext waiting for the server.
    private func pending() -> [UInt8] {
        let count = Int(BIO_ctrl_pending(output))
        var bytes = [UInt8](repeating: 0, count: count)
        if count > 0 { #expect(BIO_read(output, &bytes, Int32(count)) == Int32(count)) }
        return bytes
    }
}
