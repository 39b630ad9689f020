import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0334 hints and offline storage (XEP-0160): `<no-store/>` keeps a
/// message out, `<store/>` keeps one without a body, `<no-permanent-store/>`
/// (meant for the archive) does not stop it.
@Suite struct OfflineHintsTests {
    /// The bodies, or `<store/>`-hinted payload names, of the messages juliet
    /// gets when she next becomes available, after romeo sent `messages`
    /// while she was offline (romeo getting no error for any).
    private func keptForJuliet(_ messages: [String]) throws -> [Element] {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        for message in messages { romeo.send(message) }
        #expect(romeo.receiveElements().isEmpty, "no error: kept or dropped silently")
        let juliet = server.connect()
        try juliet.login("juliet", "pw")
        juliet.send("<presence/>")
        return juliet.receiveElements().filter { $0.name == "message" }
    }

    @Test func aMessageWithANoStoreHintIsNotKept() throws {
        let kept = try keptForJuliet([
            "<message to='juliet@localhost' type='chat'><body>ephemeral</body><no-store xmlns='urn:xmpp:hints'/></message>",
            "<message to='juliet@localhost' type='chat'><body>kept</body></message>",
        ])
        #expect(kept.map { $0.childText("body") } == ["kept"])
    }

    @Test func aNoStoreHintWinsOverAStoreHint() throws {
        let kept = try keptForJuliet([
            "<message to='juliet@localhost' type='chat'><body>x</body><store xmlns='urn:xmpp:hints'/><no-store xmlns='urn:xmpp:hints'/></message>"
        ])
        #expect(kept.isEmpty)
    }

    @Test func aNoPermanentStoreHintStillAllowsOfflineStorage() throws {
        let kept = try keptForJuliet([
            "<message to='juliet@localhost' type='chat'><body>not archived</body><no-permanent-store xmlns='urn:xmpp:hints'/></message>"
        ])
        #expect(kept.map { $0.childText("body") } == ["not archived"])
    }

    @Test func aMessageWithoutABodyIsKeptOnlyWithAStoreHint() throws {
        let kept = try keptForJuliet([
            "<message to='juliet@localhost' type='chat' id='state'><active xmlns='http://jabber.org/protocol/chatstates'/></message>",
            "<message to='juliet@localhost' type='chat' id='marker'><displayed xmlns='urn:xmpp:chat-markers:0' id='m1'/><store xmlns='urn:xmpp:hints'/></message>",
        ])
        #expect(kept.map { $0[attribute: "id"] } == ["marker"])
        #expect(kept.first?.child("delay", namespace: NS.delay)?[attribute: "from"] == "localhost")
    }
}
