import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// RFC 6121 §4.5.2: the server sends unavailable presence for a resource
/// only to those who had its available presence.
@Suite struct UnavailableOnlyAfterAvailableTests {
    @Test func aResourceThatNeverWasAvailableLeavesSilently() throws {
        let (server, _, juliet) = try romeoAndJulietAsContacts()
        let quiet = server.connect()
        try quiet.login("romeo", "pw", resource: "cli")
        // As `swiftlet send` does: explicitly unavailable from the start.
        quiet.send("<presence type='unavailable'/>")
        quiet.send("<message type='chat' to='juliet@localhost'><body>hi</body></message>")
        quiet.send("</stream:stream>")
        let presence = juliet.receiveElements().filter { $0.name == "presence" }
        #expect(presence.isEmpty, "juliet got \(presence)")
    }
}
