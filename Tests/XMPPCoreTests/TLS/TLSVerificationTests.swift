import COpenSSL
import Testing

@testable import XMPPCore

/// Client verification policies, SNI, ALPN and channel bindings.
@Suite struct TLSVerificationTests {
    @Test func pinnedFingerprintMustMatch() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let right = try TLSPair(
            client: .client(verification: .pinned(certificate.fingerprint)),
            certificate: certificate)
        right.handshake()

        let other = try SelfSignedCertificate.generate(domain: "localhost")
        let wrong = try TLSPair(
            client: .client(verification: .pinned(other.fingerprint)), certificate: certificate)
        wrong.run()
        #expect(!wrong.client.isHandshakeComplete && !wrong.server.isHandshakeComplete)
        #expect(wrong.clientError?.kind == .certificateRejected)
        #expect(
            wrong.clientError?.message.contains("certificate rejected") == true,
            "\(String(describing: wrong.clientError))")
        #expect(wrong.serverError?.kind == .handshakeFailed, "the server got the client's alert")
    }

    @Test func requireValidRejectsASelfSignedCertificate() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let pair = try TLSPair(
            client: .client(verification: .requireValid(hostname: "localhost")),
            certificate: certificate)
        pair.run()
        #expect(pair.clientError?.kind == .certificateRejected)
        #expect(
            pair.clientError?.message.contains("self-signed") == true,
            "\(String(describing: pair.clientError))")
        #expect(!pair.client.isHandshakeComplete)
    }

    /// Trusting the certificate as a root isolates the name check.
    @Test(arguments: [
        ("localhost", "localhost", true),
        ("localhost", "example.org", false),
        ("chat.example", "CHAT.example", true),
        ("chat.example", "x.chat.example", false),
        ("127.0.0.1", "127.0.0.1", true),
        ("127.0.0.1", "127.0.0.2", false),
        ("127.0.0.1", "localhost", false),
        ("[::1]", "[::1]", true),
        ("::1", "::2", false),
    ])
    func requireValidChecksTheName(domain: String, hostname: String, accepted: Bool) throws {
        let certificate = try SelfSignedCertificate.generate(domain: domain)
        let verification = TLSVerification.requireValid(
            hostname: hostname, additionalTrustRootsPEM: [certificate.certificatePEM])
        let pair = try TLSPair(
            client: .client(verification: verification), certificate: certificate)
        pair.run()
        #expect(pair.client.isHandshakeComplete == accepted)
        if accepted {
            #expect(pair.clientError == nil)
        } else {
            #expect(pair.clientError?.kind == .certificateRejected)
            #expect(
                pair.clientError?.message.contains("mismatch") == true,
                "\(String(describing: pair.clientError))")
        }
    }

    @Test func sniCarriesTheHostnameButNeverAnAddress() throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let named = try TLSPair(
            client: .client(verification: .insecureAcceptAny, serverName: "chat.example"),
            certificate: certificate)
        named.handshake()
        #expect(
            String(cString: SSL_get_servername(named.server.ssl, TLSEXT_NAMETYPE_host_name))
                == "chat.example")

        let verification = TLSVerification.requireValid(
            hostname: "localhost", additionalTrustRootsPEM: [certificate.certificatePEM])
        let byDefault = try TLSPair(
            client: .client(verification: verification), certificate: certificate)
        byDefault.handshake()
        #expect(
            String(cString: SSL_get_servername(byDefault.server.ssl, TLSEXT_NAMETYPE_host_name))
                == "localhost")

        let address = try TLSPair(
            client: .client(verification: .insecureAcceptAny, serverName: "127.0.0.1"),
            certificate: certificate)
        address.handshake()
        #expect(SSL_get_servername(address.server.ssl, TLSEXT_NAMETYPE_host_name) == nil)
    }

    @Test(
        arguments: [
            (["xmpp-client"], ["xmpp-client"], "xmpp-client"),
            (["h2", "xmpp-client"], ["xmpp-server", "xmpp-client"], "xmpp-client"),
            (["h2"], ["xmpp-client"], nil),
            ([], ["xmpp-client"], nil),
            (["xmpp-client"], [], nil),
        ] as [([String], [String], String?)])
    func alpn(clientOffers: [String], serverSupports: [String], agreed: String?) throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        var client = TLSConfiguration.client(verification: .insecureAcceptAny)
        client.applicationProtocols = clientOffers
        var server = TLSConfiguration.server(certificate: certificate.source)
        server.applicationProtocols = serverSupports
        let pair = try TLSPair(client: client, server: server)
        pair.handshake()
        #expect(pair.client.applicationProtocol == agreed)
        #expect(pair.server.applicationProtocol == agreed)
    }

    @Test(arguments: [TLSVersion.tls1_3, .tls1_2])
    func channelBindingsAreEqualOnBothSides(version: TLSVersion) throws {
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        var client = TLSConfiguration.client(verification: .pinned(certificate.fingerprint))
        client.maximumVersion = version
        let pair = try TLSPair(client: client, certificate: certificate)
        #expect(
            pair.client.channelBindingData(for: .tlsExporter) == nil, "none before the handshake")
        pair.handshake()
        #expect(pair.server.protocolVersion == version)

        let exporter = try #require(pair.client.channelBindingData(for: .tlsExporter))
        #expect(exporter.count == 32)
        #expect(pair.server.channelBindingData(for: .tlsExporter) == exporter)
        // ECDSA with SHA-256: the end-point hash is the SHA-256 fingerprint.
        #expect(
            pair.client.channelBindingData(for: .tlsServerEndPoint) == certificate.fingerprint.bytes
        )
        #expect(
            pair.server.channelBindingData(for: .tlsServerEndPoint) == certificate.fingerprint.bytes
        )
        #expect(pair.client.channelBindingData(for: .tlsUnique) == nil)
        #expect(pair.server.channelBindings == pair.client.channelBindings)
        #expect(Set(pair.server.channelBindings.keys) == [.tlsExporter, .tlsServerEndPoint])

        let another = try TLSPair(client: client, certificate: certificate)
        another.handshake()
        #expect(
            another.client.channelBindingData(for: .tlsExporter) != exporter,
            "unique per connection")
    }

    /// Certificates after the first in the chain PEM go out as intermediates.
    @Test func certificateChainIsSentWhole() throws {
        let leaf = try SelfSignedCertificate.generate(domain: "localhost")
        let intermediate = try SelfSignedCertificate.generate(domain: "ca.example")
        let chain = leaf.certificatePEM + intermediate.certificatePEM
        let server = TLSConfiguration.server(
            certificate: .pem(certificateChain: chain, privateKey: leaf.privateKeyPEM))
        let pair = try TLSPair(
            client: .client(verification: .pinned(leaf.fingerprint)), server: server)
        pair.handshake()
        #expect(OPENSSL_sk_num(SSL_get_peer_cert_chain(pair.client.ssl)) == 2)
        #expect(pair.server.context.certificateFingerprint == leaf.fingerprint)

        let damaged = chain + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        #expect(throws: TLSError.self) {
            _ = try TLSContext(
                configuration: .server(
                    certificate: .pem(certificateChain: damaged, privateKey: leaf.privateKeyPEM)))
        }
    }

    @Test func invalidConfigurationsAreRefused() throws {
        var versions = TLSConfiguration.client(verification: .insecureAcceptAny)
        versions.minimumVersion = .tls1_3
        versions.maximumVersion = .tls1_2
        var alpn = TLSConfiguration.client(verification: .insecureAcceptAny)
        alpn.applicationProtocols = [""]
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        let other = try SelfSignedCertificate.generate(domain: "localhost")
        let configurations: [TLSConfiguration] = [
            versions, alpn,
            .client(
                verification: .requireValid(
                    hostname: "localhost", additionalTrustRootsPEM: ["junk"])),
            .server(
                certificate: .pem(
                    certificateChain: certificate.certificatePEM, privateKey: other.privateKeyPEM)),
            .server(certificate: .pem(certificateChain: "", privateKey: certificate.privateKeyPEM)),
            .server(
                certificate: .pem(certificateChain: certificate.certificatePEM, privateKey: "")),
            .server(
                certificate: .pemFiles(
                    certificateChainPath: "/nonexistent/a.crt", privateKeyPath: "/nonexistent/a.key"
                )),
        ]
        for configuration in configurations {
            #expect(throws: TLSError.self) { _ = try TLSContext(configuration: configuration) }
            #expect(ERR_peek_error() == 0)
        }
        do {
            _ = try TLSContext(
                configuration: .server(
                    certificate: .pemFiles(
                        certificateChainPath: "/nonexistent/a.crt",
                        privateKeyPath: "/nonexistent/a.key")))
        } catch {
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains("/nonexistent/a.crt"))
        }
    }
}
