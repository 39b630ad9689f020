import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// RFC 6121 details of subscriptions and presence that clients see: the
/// item an approval creates, the `to` on every presence delivered, the
/// unavailable presence reflected to its sender, and the delay stamp on
/// presence the server sends from memory.
@Suite struct PresenceDetailsTests {
    /// The presence stanzas among `elements`.
    private func presences(_ elements: [Element]) -> [Element] {
        elements.filter { $0.name == "presence" }
    }

    private func rosterItems(_ client: TestClient) -> [Element] {
        let reply = client.request("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>", id: "r")
        return reply?.child("query", namespace: NS.roster)?.elements ?? []
    }

    // MARK: - approving creates the item (RFC 6121 §3.1.5, A.2.2)

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

    /// Records `PresenceSubscriptionApproved` events as (user, contact).
    final class ApprovalRecorder: ServerFeature, @unchecked Sendable {
        // @unchecked: the test server runs on the test's one thread.
        var approvals: [[String]] = []

        func install(_ hooks: Hooks) {
            hooks.on(PresenceSubscriptionApproved.self) { event in
                self.approvals.append([event.user.description, event.contact.description])
            }
        }
    }

    @Test func onlyAnApprovalTellsThatAContactMaySeeTheUser() throws {
        let recorder = ApprovalRecorder()
        let (_, romeo, juliet) = try romeoAndJuliet(extraFeatures: [recorder])
        for client in [romeo, juliet] {
            _ = rosterItems(client)
            client.send("<presence/>")
            _ = client.receive()
        }
        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        #expect(recorder.approvals == [["juliet@localhost", "romeo@localhost"]])
        // Romeo, who already sees juliet, approves her: she sees him now,
        // and he is sent her presence again, which approves nothing.
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        romeo.send("<presence type='subscribed' to='juliet@localhost'/>")
        #expect(recorder.approvals == [["juliet@localhost", "romeo@localhost"], ["romeo@localhost", "juliet@localhost"]])
    }

    // MARK: - `to` on every presence delivered (RFC 6120 §8.1.1.1)

    @Test func broadcastPresenceCarriesTheRecipientsAddress() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        let chamber = server.connect()
        try chamber.login("juliet", "pw", resource: "chamber")
        chamber.send("<presence/>")
        let welcome = presences(chamber.receiveElements())
        #expect(welcome.count == 3, "its own, romeo's and balcony's")
        #expect(welcome.allSatisfy { $0[attribute: "to"] == "juliet@localhost/chamber" })
        _ = romeo.receive()
        _ = juliet.receive()

        // An update: the contact by its bare JID, each own resource by its full JID.
        juliet.send("<presence><show>away</show></presence>")
        #expect(presences(romeo.receiveElements()).map { $0[attribute: "to"] } == ["romeo@localhost"])
        #expect(presences(juliet.receiveElements()).map { $0[attribute: "to"] } == ["juliet@localhost/balcony"])
        #expect(presences(chamber.receiveElements()).map { $0[attribute: "to"] } == ["juliet@localhost/chamber"])

        // The end of a session.
        juliet.session.transportClosed()
        let gone = presences(romeo.receiveElements())
        #expect(gone.map { $0[attribute: "type"] } == ["unavailable"])
        #expect(gone.first?[attribute: "to"] == "romeo@localhost")
        #expect(presences(chamber.receiveElements()).first?[attribute: "to"] == "juliet@localhost/chamber")
    }

    // MARK: - unavailable reflected to its sender (RFC 6121 §4.5.2)

    @Test func unavailablePresenceAlsoReachesTheResourceThatSentIt() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        romeo.send("<presence><status>Hello</status></presence>")
        _ = romeo.receive()
        romeo.send("<presence type='unavailable'><status>Goodbye</status></presence>")
        let got = presences(romeo.receiveElements())
        #expect(got.count == 1)
        #expect(got.first?[attribute: "type"] == "unavailable")
        #expect(got.first?[attribute: "from"] == "romeo@localhost/orchard")
        #expect(got.first?[attribute: "to"] == "romeo@localhost/orchard")
        #expect(got.first?.childText("status") == "Goodbye")
        // Once unavailable, another unavailable tells no one, itself included.
        romeo.send("<presence type='unavailable'/>")
        #expect(romeo.receiveElements().isEmpty)
    }

    // MARK: - remembered presence carries its delay (XEP-0203)

    /// Romeo and juliet on a server whose wall clock `clock` sets, juliet
    /// available (and interested in her roster) since the clock's start.
    private func couple(clock: SettableClock) throws -> (TestServer, TestClient, TestClient) {
        let (server, romeo, juliet) = try romeoAndJuliet(clock: clock.wallClock)
        for client in [romeo, juliet] {
            _ = rosterItems(client)
            client.send("<presence/>")
            _ = client.receive()
        }
        return (server, romeo, juliet)
    }

    private func delay(_ presence: Element?) -> Element? {
        presence?.child("delay", namespace: NS.delay)
    }

    @Test func presenceSentAfterAnApprovalCarriesTheDelayOfItsArrival() throws {
        let clock = SettableClock()
        let (_, romeo, juliet) = try couple(clock: clock)
        let arrival = DateTimeProfile.string(millisecondsSince1970: clock.now)
        clock.advance(seconds: 90)
        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        _ = juliet.receive()
        _ = romeo.receive()
        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        let current = presences(romeo.receiveElements()).first { $0[attribute: "type"] == nil }
        #expect(current?[attribute: "from"] == "juliet@localhost/balcony")
        #expect(current?[attribute: "to"] == "romeo@localhost")
        #expect(delay(current)?[attribute: "from"] == "localhost")
        #expect(delay(current)?[attribute: "stamp"] == arrival, "when it arrived, not when it was sent")

        // A live update has no delay; what the server remembers of it, its own.
        juliet.send("<presence><show>away</show></presence>")
        let update = presences(romeo.receiveElements()).first
        #expect(update?.childText("show") == "away")
        #expect(delay(update) == nil)
        clock.advance(seconds: 30)
        let updated = DateTimeProfile.string(millisecondsSince1970: clock.now - 30_000)
        romeo.send("<presence type='unsubscribe' to='juliet@localhost'/>")
        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        _ = romeo.receive()
        _ = juliet.receive()
        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        let again = presences(romeo.receiveElements()).first { $0[attribute: "type"] == nil }
        #expect(again?.childText("show") == "away")
        #expect(delay(again)?[attribute: "stamp"] == updated)
    }

    @Test func probeAnswersCarryTheDelayOfThePresenceTheyRepeat() throws {
        let clock = SettableClock()
        let (server, romeo, juliet) = try couple(clock: clock)
        let arrival = DateTimeProfile.string(millisecondsSince1970: clock.now)
        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        _ = romeo.receive()
        clock.advance(seconds: 600)
        let hall = server.connect()
        try hall.login("romeo", "pw", resource: "hall")
        hall.send("<presence/>")
        let welcome = presences(hall.receiveElements())
        let julietsPresence = welcome.first { $0[attribute: "from"] == "juliet@localhost/balcony" }
        #expect(julietsPresence?[attribute: "to"] == "romeo@localhost/hall")
        #expect(delay(julietsPresence)?[attribute: "stamp"] == arrival)
        let orchard = welcome.first { $0[attribute: "from"] == "romeo@localhost/orchard" }
        #expect(delay(orchard)?[attribute: "stamp"] == arrival, "the other resource's presence too")
        let own = welcome.first { $0[attribute: "from"] == "romeo@localhost/hall" }
        #expect(own != nil && delay(own) == nil, "its own presence is live")
    }

    @Test func presenceSentAgainAfterAnUnblockCarriesTheDelayOfItsArrival() throws {
        let clock = SettableClock()
        let (_, romeo, juliet) = try couple(clock: clock)
        let arrival = DateTimeProfile.string(millisecondsSince1970: clock.now)
        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        _ = romeo.receive()
        juliet.send("<iq type='set' id='b'><block xmlns='urn:xmpp:blocking'><item jid='romeo@localhost'/></block></iq>")
        _ = juliet.receive()
        #expect(presences(romeo.receiveElements()).first?[attribute: "type"] == "unavailable")
        clock.advance(seconds: 60)
        juliet.send("<iq type='set' id='u'><unblock xmlns='urn:xmpp:blocking'><item jid='romeo@localhost'/></unblock></iq>")
        let back = presences(romeo.receiveElements()).first
        #expect(back?[attribute: "from"] == "juliet@localhost/balcony")
        #expect(back?[attribute: "to"] == "romeo@localhost")
        #expect(delay(back)?[attribute: "stamp"] == arrival)
    }
}
