import Testing
import XMPPCore
import XMPPTestSupport

/// XEP-0198 resumption on a real server over TCP, where closing a
/// connection reports back to the session asynchronously.
@Suite(.timeLimit(.minutes(1)))
struct LiveResumptionTests {
    /// A client that leaves `<r/>` unanswered for `sm_ack_timeout` is
    /// treated as gone while its TCP connection is still up: the server
    /// closes it and keeps the session for `<resume/>`. The close coming
    /// back from the socket afterwards must not end that session.
    @Test func aSessionDetachedForASilentClientCanBeResumed() throws {
        try LiveServer.run(configure: { $0.timeouts.acknowledgement = .seconds(5) }) { server in
            try server.register("romeo", "montague")
            try server.register("juliet", "capulet")
            let romeo = try server.loggedInClient("romeo", "montague", resource: "orchard")
            try romeo.send("<enable xmlns='urn:xmpp:sm:3' resume='true'/>")
            let id = try #require(try romeo.nextElement()[attribute: "id"])
            let juliet = try server.loggedInClient("juliet", "capulet")
            try juliet.send("<message to='romeo@localhost/orchard' type='chat'><body>are you there?</body></message>")
            #expect(try romeo.nextElement().childText("body") == "are you there?")
            #expect(try romeo.nextElement().name == "r")
            try server.waitForLog(containing: "no acknowledgement within", timeout: .seconds(15))
            _ = try romeo.readUntilClosed()

            let again = try server.connectWithTLS()
            #expect(try again.authenticate("romeo", "montague", mechanism: .scramSHA256).name == "success")
            _ = try again.openStream()
            try again.send("<resume xmlns='urn:xmpp:sm:3' previd='\(id)' h='0'/>")
            let resumed = try again.nextElement()
            #expect(resumed.name == "resumed")
            #expect(try again.nextElement().childText("body") == "are you there?")
        }
    }
}
