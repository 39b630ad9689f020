import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

@testable import XMPPClient

/// SASL2, Bind 2 and FAST between the client kit and swiftletd on
/// loopback: the strongest login both offer, the token on the next one,
/// a token that no longer works giving way to the keys, and logging out.
@Suite("Modern login", .timeLimit(.clientSuite))
struct ModernLoginTests {
    /// A client for `alice` with the saved `login`, as the installation
    /// `userAgentID`.
    private func savedClient(
        _ server: ServerFixture, _ login: SavedLogin, userAgentID: UUID
    ) throws -> XMPPClient {
        var configuration = server.configuration("alice")
        configuration.secret = .saved(login)
        configuration.userAgentID = userAgentID
        return try XMPPClient(configuration: configuration)
    }

    /// Registers `alice` and logs her in with the password; returns the
    /// connected client and the login to save, which has a FAST token.
    private func loggedIn(_ server: ServerFixture) async throws -> (XMPPClient, SavedLogin) {
        let client = try await server.registeredClient("alice")
        try await client.connect()
        let login = try #require(await client.savedLogin)
        try #require(login.fastToken != nil)
        return (client, login)
    }

    @Test("SCRAM-SHA-256-PLUS with tls-exporter, checked by XEP-0474, binds inline and gets a FAST token")
    func scramPlusAndBind2() async throws {
        try await ServerFixture.run { server in
            let client = try await server.registeredClient("alice")
            try await client.connect()
            #expect(await client.loginDetails == .scramPlus)
            let jid = try #require(await client.boundJID)
            #expect(jid.resourcepart?.hasPrefix("swiftlet/") == true, "\(jid)")
            #expect(await client.isResumable)
            let login = try #require(await client.savedLogin)
            #expect(login.mechanism == .scramSHA256)
            #expect(login.fastToken?.mechanism == .sha256Exporter)
            #expect((login.fastToken?.expiry ?? .distantPast) > Date())
            // The session works: the server answers.
            try await client.ping()
            await client.disconnect()
        }
    }

    @Test("the saved FAST token logs the same installation in; another installation falls back to the keys")
    func fastReconnect() async throws {
        try await ServerFixture.run { server in
            let (first, login) = try await loggedIn(server)
            let firstJID = try #require(await first.boundJID)
            await first.disconnect()

            let again = try savedClient(server, login, userAgentID: first.configuration.userAgentID)
            try await again.connect()
            #expect(await again.loginDetails == .fastExporter)
            // Bind 2 gives the same installation the same resource.
            #expect(await again.boundJID == firstJID)
            await again.disconnect()

            // The token was issued to the first installation's id only.
            let other = try savedClient(server, login, userAgentID: UUID())
            try await other.connect()
            #expect(await other.loginDetails?.mechanism == "SCRAM-SHA-256-PLUS")
            #expect(await other.savedLogin?.fastToken != nil, "a token of its own")
            #expect(await other.savedLogin?.fastToken != login.fastToken)
            await other.disconnect()
        }
    }

    @Test("logOut invalidates the token: the next login with it falls back to the keys")
    func fastInvalidation() async throws {
        try await ServerFixture.run { server in
            let (first, login) = try await loggedIn(server)
            try await first.logOut()
            #expect(await first.savedLogin?.fastToken == nil)

            let stale = try savedClient(server, login, userAgentID: first.configuration.userAgentID)
            try await stale.connect()
            #expect(await stale.loginDetails?.usedToken == false)
            #expect(await stale.loginDetails?.mechanism == "SCRAM-SHA-256-PLUS")
            await stale.disconnect()
        }
    }

    @Test("with FAST off on the server, SASL2 logs in with SCRAM-PLUS and asks for no token")
    func withoutFAST() async throws {
        try await ServerFixture.run(configure: { $0.authentication.fastTokenLifetime = .zero }) { server in
            let client = try await server.registeredClient("alice")
            try await client.connect()
            #expect(await client.loginDetails?.mechanism == "SCRAM-SHA-256-PLUS")
            #expect(await client.savedLogin?.fastToken == nil)
            await client.disconnect()
        }
    }
}
