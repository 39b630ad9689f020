import XMPPClient
import XMPPCore

/// A server the client kit's scenarios run against: swiftletd in this
/// process, or Prosody as a child process.
protocol ClientTestServer {
    /// A client configuration for `user@localhost` at this server, trusting
    /// its certificate by fingerprint, with short timeouts and backoff.
    func clientConfiguration(user: String, password: String, resource: String?) -> ClientConfiguration
}

extension ClientTestServer {
    /// The configuration for `user`, by default with the test password
    /// and no resource.
    func configuration(_ user: String, password: String = "secret", resource: String? = nil) -> ClientConfiguration {
        clientConfiguration(user: user, password: password, resource: resource)
    }

    /// Registers `user` in band and returns a client for it, not yet connected.
    func registeredClient(
        _ user: String, password: String = "secret", resource: String? = nil,
        adjust: (inout ClientConfiguration) -> Void = { _ in }
    ) async throws -> XMPPClient {
        var configuration = configuration(user, password: password, resource: resource)
        adjust(&configuration)
        let client = try XMPPClient(configuration: configuration)
        try await client.register(username: user, password: password)
        return client
    }
}

/// The settings every test client shares.
func testConfiguration(
    _ user: String, password: String, resource: String?, host: String, port: UInt16,
    fingerprint: CertificateFingerprint
) -> ClientConfiguration {
    var configuration = ClientConfiguration(jid: try! JID("\(user)@localhost"), secret: .password(password))
    configuration.host = host
    configuration.port = port
    configuration.tls = .pinned(fingerprint)
    configuration.resource = resource
    configuration.timeout = .seconds(5)
    configuration.reconnect.initialDelay = .milliseconds(100)
    configuration.reconnect.maximumDelay = .milliseconds(500)
    return configuration
}
