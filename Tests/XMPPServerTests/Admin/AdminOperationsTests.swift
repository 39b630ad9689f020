import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// The admin operations on their own, as a web page would call them, and
/// the `admins` setting.
@Suite struct AdminOperationsTests {
    /// Waits on `server`'s loop for what `operation` completes with.
    private func outcome<Value>(_ server: TestServer, _ operation: (@escaping (Value) -> Void) -> Void) throws -> Value {
        var value: Value?
        operation { value = $0 }
        #expect(value == nil, "completes in a later loop turn, not inside the call")
        server.loop.run()
        return try #require(value)
    }

    @Test func onlineSessionsDescribeEachSession() throws {
        let (server, _, romeo) = try adminAndRomeo()
        romeo.send("<enable xmlns='urn:xmpp:sm:3'/>")
        _ = romeo.receive()
        let sessions = try outcome(server, AdminOperations(server: server.context).onlineSessions)
        #expect(sessions.map(\.jid.description) == ["juliet@localhost/balcony", "romeo@localhost/orchard"])
        let details = try #require(sessions.last)
        #expect(details.resource == "orchard")
        #expect(details.streamManagement && !sessions[0].streamManagement)
        #expect(!details.isSecure && !details.isDetached)
        #expect(details.peerAddress.contains("127.0.0.1"))
        #expect(details.clientSoftware == nil)
    }

    @Test func aSessionShowsTheSoftwareItsSASL2LoginNamed() throws {
        let (server, _, _) = try adminAndRomeo()
        let phone = server.connect()
        try phone.openStream()
        try phone.startTLS()
        let plain = try SASLPlain.encode(username: "romeo", password: "pw")
        phone.send(
            "<authenticate xmlns='urn:xmpp:sasl:2' mechanism='PLAIN'><initial-response>\(SASLPayload.encode(plain))"
                + "</initial-response><user-agent id='d2f2a1c4-5bd3-4a4e-8f2a-0c1f1c0d9a11'><software>Conversations</software>"
                + "</user-agent></authenticate>")
        #expect(phone.receiveElements().first?.name == "success")
        try phone.bind("phone")
        let sessions = try outcome(server, AdminOperations(server: server.context).onlineSessions)
        let shown = try #require(sessions.first { $0.resource == "phone" })
        #expect(shown.clientSoftware == "Conversations")
        #expect(shown.isSecure)
    }

    @Test func operationsCompleteLaterWithTypedFailures() throws {
        let (server, _, _) = try adminAndRomeo()
        let operations = AdminOperations(server: server.context)
        #expect(try outcome(server, operations.accountCount).get() == 2)
        #expect(try outcome(server, operations.accounts).get().map(\.description) == ["juliet@localhost", "romeo@localhost"])
        let added = try outcome(server) { operations.addAccount("tybalt", password: "pw", $0) }
        #expect(try added.get().description == "tybalt@localhost")
        let again = try outcome(server) { operations.addAccount("tybalt@localhost", password: "pw", $0) }
        #expect((again.failure as? AdminOperationError)?.reason == .exists)
        let badPassword = try outcome(server) { operations.resetPassword("tybalt", password: "", $0) }
        #expect((badPassword.failure as? AdminOperationError)?.stanzaError.condition == .notAcceptable)
        let gone = try outcome(server) { operations.deleteAccount("nobody", $0) }
        #expect((gone.failure as? AdminOperationError)?.reason == .notFound)
        #expect(try outcome(server) { operations.endSessions(of: "tybalt", $0) }.get() == 0)
    }

    @Test func adminsAreNormalizedToLocalpartsOfTheDomain() throws {
        var config = ServerConfig()
        config.admins = ["Alice", "bob@localhost"]
        #expect(try config.validated().admins == ["alice", "bob"])
        for wrong in ["carol@elsewhere", "dave@localhost/phone", "a,b"] {
            config.admins = [wrong]
            #expect(throws: ConfigError.self) { try config.validated() }
        }
        #expect(ServerConfig().admins.isEmpty)
    }
}

extension Result {
    /// The error of a failure, nil for a success.
    var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
