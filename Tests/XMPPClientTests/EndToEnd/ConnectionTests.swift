import Foundation
import Testing
import XMPPClient
import XMPPCore
import XMPPTestSupport

/// Connecting, logging in and the ways that fails, against swiftletd on
/// loopback.
@Suite("Client connection", .timeLimit(.clientSuite))
struct ConnectionTests {
    @Test("register, connect over STARTTLS with SCRAM, bind the asked resource, disconnect")
    func registerAndConnect() async throws {
        try await ServerFixture.run { try await Self.registerAndConnect(on: $0) }
    }

    static func registerAndConnect(on server: some ClientTestServer) async throws {
        let client = try await server.registeredClient("alice", resource: "phone")
        let events = EventRecorder(client)
        try await client.connect()
        let bound = try #require(await client.boundJID)
        #expect(bound.description == "alice@localhost/phone")
        #expect(await client.state == .connected(bound))
        let login = try #require(await client.savedLogin)
        #expect(login.mechanism == .scramSHA256 || login.mechanism == .scramSHA1)
        await client.disconnect()
        #expect(await client.state == .disconnected(nil))
        try await events.first("connecting") { $0 == .connectionState(.connecting) ? true : nil }
        try await events.first("disconnected") { $0 == .connectionState(.disconnected(nil)) ? true : nil }
    }

    @Test("saved SCRAM keys log in without the password; outdated keys are refused")
    func savedKeys() async throws {
        try await ServerFixture.run { try await Self.savedKeys(on: $0) }
    }

    static func savedKeys(on server: some ClientTestServer) async throws {
        let first = try await server.registeredClient("alice")
        try await first.connect()
        let login = try #require(await first.savedLogin)
        await first.disconnect()

        let again = try XMPPClient(
            configuration: { var c = server.configuration("alice"); c.secret = .saved(login); return c }())
        try await again.connect()
        #expect(await again.boundJID?.localpart == "alice")
        try await again.changePassword(to: "changed")
        await again.disconnect()

        let stale = try XMPPClient(
            configuration: { var c = server.configuration("alice"); c.secret = .saved(login); return c }())
        await #expect(throws: XMPPClientError.notAuthorized) { try await stale.connect() }
        let fresh = try XMPPClient(configuration: server.configuration("alice", password: "changed"))
        try await fresh.connect()
        await fresh.disconnect()
    }

    @Test("a wrong password is notAuthorized and does not reconnect")
    func wrongPassword() async throws {
        try await ServerFixture.run { try await Self.wrongPassword(on: $0) }
    }

    static func wrongPassword(on server: some ClientTestServer) async throws {
        _ = try await server.registeredClient("alice")
        let client = try XMPPClient(configuration: server.configuration("alice", password: "wrong"))
        await #expect(throws: XMPPClientError.notAuthorized) { try await client.connect() }
        #expect(await client.state == .disconnected(.notAuthorized))
    }

    @Test("registering a taken name is a conflict")
    func registrationConflict() async throws {
        try await ServerFixture.run { try await Self.registrationConflict(on: $0) }
    }

    static func registrationConflict(on server: some ClientTestServer) async throws {
        _ = try await server.registeredClient("alice")
        let again = try XMPPClient(configuration: server.configuration("alice"))
        await #expect(throws: XMPPClientError.registrationConflict) {
            try await again.register(username: "alice", password: "other")
        }
    }

    @Test("registering on a server with registration closed is registrationNotAllowed")
    func registrationClosed() async throws {
        try await ServerFixture.run(configure: { $0.registration.mode = .closed }) { server in
            let client = try XMPPClient(configuration: server.configuration("bob"))
            do {
                try await client.register(username: "bob", password: "secret")
                Issue.record("registration succeeded on a closed server")
            } catch let error as XMPPClientError {
                guard case .registrationNotAllowed = error else {
                    Issue.record("expected registrationNotAllowed, got \(error)")
                    return
                }
            }
        }
    }

    @Test("TLS trust: a wrong pin and an unverifiable self-signed certificate both fail as TLS errors")
    func tlsTrust() async throws {
        try await ServerFixture.run { try await Self.tlsTrust(on: $0) }
    }

    static func tlsTrust(on server: some ClientTestServer) async throws {
        for policy in [
            ClientTLSPolicy.pinned(CertificateFingerprint(bytes: Array(repeating: 1, count: 32))!),
            .requireValid,
        ] {
            var configuration = server.configuration("alice")
            configuration.tls = policy
            let error = await connectionError(try XMPPClient(configuration: configuration))
            guard case .tls? = error else {
                Issue.record("expected a TLS error for \(policy), got \(String(describing: error))")
                continue
            }
        }
        var insecure = server.configuration("alice")
        insecure.tls = .insecureAcceptAny
        try await XMPPClient(configuration: insecure).register(username: "alice", password: "secret")
    }

    @Test("nothing listening is cannotConnect; an unknown host name is cannotConnect")
    func unreachable() async throws {
        var configuration = try ClientConfiguration(jid: "alice@localhost", password: "x")
        configuration.host = "127.0.0.1"
        configuration.port = try unusedPort()
        configuration.timeout = .seconds(3)
        for host in ["127.0.0.1", "no-such-host.invalid"] {
            configuration.host = host
            let error = await connectionError(try XMPPClient(configuration: configuration))
            guard case .cannotConnect? = error else {
                Issue.record("expected cannotConnect for \(host), got \(String(describing: error))")
                continue
            }
        }
    }

    @Test("delete the account: the client disconnects and the login is refused afterwards")
    func deleteAccount() async throws {
        try await ServerFixture.run { try await Self.deleteAccount(on: $0) }
    }

    static func deleteAccount(on server: some ClientTestServer) async throws {
        let client = try await server.registeredClient("alice")
        try await client.connect()
        try await client.deleteAccount()
        #expect(await client.state == .disconnected(nil))
        let again = try XMPPClient(configuration: server.configuration("alice"))
        await #expect(throws: XMPPClientError.notAuthorized) { try await again.connect() }
    }
}

/// How `client.connect()` failed; `nil` if it connected.
func connectionError(_ client: XMPPClient) async -> XMPPClientError? {
    do {
        try await client.connect()
        return nil
    } catch {
        return error
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
func unusedPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw TestFailure("cannot bind a probe socket") }
    return UInt16(bigEndian: address.sin_port)
}
