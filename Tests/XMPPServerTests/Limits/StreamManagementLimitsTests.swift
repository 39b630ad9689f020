import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A client using stream management cannot make the server keep
/// unacknowledged stanzas without bound, nor leave `<r/>` unanswered
/// forever; nothing it was sent is lost when it is cut off.
@Suite struct StreamManagementLimitsTests {
    private func chat(_ text: String, from sender: TestClient) {
        sender.send("<message type='chat' to='romeo@localhost/orchard' id='\(text)'><body>\(text)</body></message>")
    }

    /// The bodies of the messages a new session of romeo gets at login.
    private func bodiesAtNextLogin(_ server: TestServer) throws -> [String] {
        let next = server.connect()
        try next.login("romeo", "pw", resource: "orchard")
        next.send("<presence/>")
        return next.receiveElements().compactMap { $0.name == "message" ? $0.childText("body") : nil }
    }

    @Test func pastTheUnacknowledgedCountTheStreamEndsAndTheStanzasGoOffline() throws {
        var config = ServerConfig()
        config.limits.smMaxUnacked = 10
        let (server, romeo, juliet, _) = try streamManagementCouple(config: config, resume: false)
        // Juliet's presence is already unacknowledged: ten messages pass it.
        for index in 1...10 { chat("m\(index)", from: juliet) }
        let events = romeo.receive()
        #expect(romeo.isClosed)
        #expect(events.streamErrorCondition == "resource-constraint")
        #expect(try bodiesAtNextLogin(server) == (1...10).map { "m\($0)" })
    }

    @Test func pastTheUnacknowledgedSizeTheStreamEnds() throws {
        var config = ServerConfig()
        config.limits.smMaxUnackedSize = config.limits.maxStanzaSize
        let (server, romeo, juliet, _) = try streamManagementCouple(config: config, resume: false)
        let body = String(repeating: "y", count: 300_000)
        for index in 1...4 {
            juliet.send("<message type='chat' to='romeo@localhost/orchard' id='big\(index)'><body>\(body)</body></message>")
        }
        #expect(romeo.isClosed)
        #expect(try bodiesAtNextLogin(server).count == 4)
    }

    @Test func acknowledgingKeepsTheStreamOpen() throws {
        var config = ServerConfig()
        config.limits.smMaxUnacked = 10
        let (_, romeo, juliet, _) = try streamManagementCouple(config: config, resume: false)
        var handled = 1  // juliet's presence
        for index in 1...30 {
            chat("m\(index)", from: juliet)
            handled += romeo.receiveElements().count { $0.name == "message" }
            romeo.send("<a xmlns='urn:xmpp:sm:3' h='\(handled)'/>")
        }
        #expect(handled == 31)
        #expect(!romeo.isClosed)
    }

    @Test func anUnansweredRequestDetachesAResumableSession() throws {
        let (server, romeo, juliet, enabled) = try streamManagementCouple()
        for index in 1...5 { chat("m\(index)", from: juliet) }
        #expect(romeo.receiveElements().contains { $0.name == "r" })
        server.loop.advance(by: server.context.config.timeouts.acknowledgement - .seconds(1))
        #expect(!romeo.isClosed)
        server.loop.advance(by: .seconds(2))
        #expect(romeo.isClosed)
        #expect(server.logLines.lines.contains { $0.contains("no acknowledgement within") })
        // The session waits to be resumed, with everything unacknowledged.
        let again = server.connect()
        try again.openStream()
        try again.authenticate("romeo", "pw")
        again.send("<resume xmlns='urn:xmpp:sm:3' previd='\(enabled[attribute: "id"]!)' h='1'/>")
        let elements = again.receiveElements()
        #expect(elements.first?.name == "resumed")
        #expect(elements.compactMap { $0.name == "message" ? $0.childText("body") : nil } == (1...5).map { "m\($0)" })
    }

    @Test func anUnansweredRequestEndsANonResumableStream() throws {
        let (server, romeo, juliet, _) = try streamManagementCouple(resume: false)
        for index in 1...5 { chat("m\(index)", from: juliet) }
        _ = romeo.receiveElements()
        server.loop.advance(by: server.context.config.timeouts.acknowledgement + .seconds(1))
        #expect(romeo.receive().streamErrorCondition == "connection-timeout")
        #expect(try bodiesAtNextLogin(server) == (1...5).map { "m\($0)" })
    }

    /// A backlog larger than the stream may hold unacknowledged ends the
    /// stream at login, but loses nothing: what was sent goes back to
    /// offline storage, what was not stays there, and the next login gets
    /// every message once (those handed back come after the rest).
    /// (Validation keeps the defaults from ever doing this; here the limit
    /// is set below the backlog on purpose.)
    @Test func anOfflineBacklogBeyondTheLimitIsNeitherLostNorDoubled() throws {
        var config = ServerConfig()
        config.limits.smMaxUnacked = 10
        let server = try TestServer(config: config)
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let juliet = server.connect()
        try juliet.login("juliet", "pw", resource: "balcony")
        for index in 1...30 { chat("m\(index)", from: juliet) }
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "orchard")
        phone.send("<enable xmlns='urn:xmpp:sm:3'/>")
        phone.send("<presence/>")
        #expect(phone.receive().streamErrorCondition == "resource-constraint")
        #expect(try bodiesAtNextLogin(server).sorted() == (1...30).map { "m\($0)" }.sorted())
    }

    @Test func theDefaultsTakeAFullOfflineBacklogAtLogin() throws {
        let config = try ServerConfig().validated()
        #expect(config.limits.smMaxUnacked > config.limits.offlineQuota)
        #expect(config.limits.smMaxUnackedSize >= config.limits.offlineQuotaSize + config.limits.maxStanzaSize)
        #expect(config.limits.maxQueuedOutput >= config.limits.offlineQuotaSize + 2 * config.limits.maxStanzaSize)
        var tight = ServerConfig()
        tight.limits.smMaxUnacked = tight.limits.offlineQuota
        #expect(throws: ConfigError.self) { try tight.validated() }
    }
}
