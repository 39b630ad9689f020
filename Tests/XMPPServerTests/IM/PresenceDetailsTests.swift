import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// RFC 6121 details of subscriptions and presence that clients see: the
/// item an approval creates, the `to` on every presence delivered, the
/// unavailable presence reflected to its sender, and the delay stamp on
/// presence the server sends from memory.
@Suite struct PresenceDetailsTests {
    private func rosterItems(_ client: TestClient) -> [Element] {
        let reply = client.request("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>", id: "r")
        return reply?.child("query", namespace: NS.roster)?.elements ?? []
    }

    // MARK: - Item 1: approving creates the item (RFC 6121 §3.1.5, A.2.2)

    @Test func approvingARequestFromSomeoneNotInTheRosterAddsThemWithFromAndPushesIt() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        #expect(rosterItems(juliet).isEmpty, "juliet asked for the roster: she gets pushes")
        juliet.send("<presence/>")
        _ = juliet.receive()
        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        #expect(juliet.receiveElements().allSatisfy { $0.name == "presence" }, "a request alone pushes nothing")

        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        let push = juliet.receiveElements().first { $0.name == "iq" && $0[attribute: "type"] == "set" }
        let item = push?.child("query", namespace: NS.roster)?.child("item")
        #expect(item?[attribute: "jid"] == "romeo@localhost")
        #expect(item?[attribute: "subscription"] == "from")
        #expect(item?[attribute: "ask"] == nil)
        #expect(push?[attribute: "to"] == "juliet@localhost/balcony")
        let stored = rosterItems(juliet)
        #expect(stored.map { $0[attribute: "jid"] } == ["romeo@localhost"])
        #expect(stored.first?[attribute: "subscription"] == "from")
    }
}
