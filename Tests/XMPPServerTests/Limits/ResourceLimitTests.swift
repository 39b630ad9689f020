import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// RFC 6120 §7.6.2.1: an account has at most `max_resources_per_account`
/// resources bound at once; one more gets `resource-constraint`.
@Suite struct ResourceLimitTests {
    private func bindRequest(_ resource: String) -> String {
        "<iq type='set' id='b'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>\(resource)</resource></bind></iq>"
    }

    @Test func aResourceBeyondTheLimitIsAResourceConstraintUntilOneLeaves() throws {
        var config = ServerConfig()
        config.limits.maxResourcesPerAccount = 2
        let server = try TestServer(config: config)
        try server.addUser("romeo", password: "pw")
        let first = server.connect()
        try first.login("romeo", "pw", resource: "one")
        try server.connect().login("romeo", "pw", resource: "two")

        let third = server.connect()
        try third.openStream()
        try third.authenticate("romeo", "pw")
        third.send(bindRequest("three"))
        let refused = try third.receiveOne()
        #expect(refused[attribute: "type"] == "error")
        #expect(refused.child("error")?[attribute: "type"] == "wait")
        #expect(refused.errorCondition == "resource-constraint")
        #expect(server.context.sessions.sessions(of: try JID("romeo@localhost")).count == 2)

        // Taking over a full JID that is already bound is still allowed.
        let again = server.connect()
        #expect(try again.login("romeo", "pw", resource: "one").description == "romeo@localhost/one")
        #expect(first.isClosed)

        again.dropConnection()
        third.send(bindRequest("three"))
        #expect(try third.receiveOne()[attribute: "type"] == "result")
    }
}
