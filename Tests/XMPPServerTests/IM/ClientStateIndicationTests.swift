import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0352: what an inactive client receives, and when.
@Suite struct PresenceHoldingTests {
    private func presenceFrom(_ elements: [Element]) -> [Element] {
        elements.filter { $0.name == "presence" }
    }

    @Test func presenceIsHeldUntilAMessageThenSentFirst() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send("<inactive xmlns='urn:xmpp:csi:0'/>")
        juliet.send("<presence><show>away</show></presence>")
        juliet.send("<presence><show>dnd</show><status>busy</status></presence>")
        #expect(presenceFrom(romeo.receiveElements()).isEmpty)
        juliet.send("<message type='chat' to='romeo@localhost'><body>hi</body></message>")
        let elements = romeo.receiveElements()
        // Only the latest presence of the resource, and before the message.
        #expect(elements.map(\.name) == ["presence", "message"])
        #expect(elements.first?.childText("show") == "dnd")
    }

    @Test func becomingActiveReleasesHeldPresence() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send("<inactive xmlns='urn:xmpp:csi:0'/>")
        juliet.send("<presence type='unavailable'/>")
        #expect(presenceFrom(romeo.receiveElements()).isEmpty)
        romeo.send("<active xmlns='urn:xmpp:csi:0'/>")
        #expect(presenceFrom(romeo.receiveElements()).first?[attribute: "type"] == "unavailable")
    }

    /// The hold is bounded in bytes too: a presence heavier than
    /// `HeldPresence.maxHeldSize` goes out at once, after what was held.
    @Test func largePresenceIsNotHeld() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send("<inactive xmlns='urn:xmpp:csi:0'/>")
        juliet.send("<presence><show>away</show></presence>")
        #expect(presenceFrom(romeo.receiveElements()).isEmpty)
        let status = String(repeating: "s", count: HeldPresence.maxHeldSize)
        juliet.send("<presence><status>\(status)</status></presence>")
        let delivered = presenceFrom(romeo.receiveElements())
        #expect(delivered.map { $0.childText("show") } == ["away", nil])
        #expect(delivered.last?.childText("status")?.count == status.count)
    }

    @Test func subscriptionRequestsAreNotHeld() throws {
        let (server, romeo, _) = try romeoAndJulietAsContacts()
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw")
        romeo.send("<inactive xmlns='urn:xmpp:csi:0'/>")
        mercutio.send("<presence type='subscribe' to='romeo@localhost'/>")
        #expect(presenceFrom(romeo.receiveElements()).map { $0[attribute: "type"] } == ["subscribe"])
    }

    @Test func holdIsBoundedAndKeepsFirstArrivalOrder() {
        var hold = HeldPresence()
        func presence(_ from: String, _ show: String) -> Element {
            Element("presence", namespace: NS.client, attributes: ["from": from], children: [
                .element(Element("show", namespace: NS.client, children: [.text(show)]))
            ])
        }
        for (from, show) in [("a@x/1", "away"), ("b@x/1", "xa"), ("a@x/1", "dnd")] {
            let over = hold.hold(presence(from, show))
            #expect(!over)
        }
        let taken = hold.take()
        #expect(taken.map { $0.childText("show") } == ["dnd", "xa"])
        #expect(hold.isEmpty)
        for index in 0..<HeldPresence.limit { _ = hold.hold(presence("u\(index)@x/r", "away")) }
        let overLimit = hold.hold(presence("last@x/r", "away"))
        #expect(overLimit)
    }
}
