import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0280 Message Carbons.
@Suite struct CarbonsTests {
    /// Romeo on orchard (priority 5) and hall (priority 1), both with
    /// carbons on and available, and juliet on balcony, available.
    private func setUp() throws -> (TestServer, orchard: TestClient, hall: TestClient, juliet: TestClient) {
        let (server, orchard, juliet) = try romeoAndJuliet()
        let hall = server.connect()
        try hall.login("romeo", "pw", resource: "hall")
        for client in [orchard, hall] {
            #expect(client.request("<iq type='set' id='c'><enable xmlns='urn:xmpp:carbons:2'/></iq>", id: "c")?[attribute: "type"] == "result")
        }
        orchard.send("<presence><priority>5</priority></presence>")
        hall.send("<presence><priority>1</priority></presence>")
        juliet.send("<presence/>")
        for client in [orchard, hall, juliet] { _ = client.receive() }
        return (server, orchard, hall, juliet)
    }

    private func carbon(_ element: Element?, _ kind: String) -> Element? {
        element?.child(kind, namespace: NS.carbons)?.child("forwarded", namespace: NS.forward)?.child("message", namespace: NS.client)
    }

    @Test func enableAndDisableAnswerWithoutDiscoAndMayRepeat() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        for (id, payload) in [("a", "enable"), ("b", "enable"), ("c", "disable"), ("d", "disable")] {
            let reply = romeo.request("<iq type='set' id='\(id)'><\(payload) xmlns='urn:xmpp:carbons:2'/></iq>", id: id)
            #expect(reply?[attribute: "type"] == "result")
        }
        let toSelf = romeo.request("<iq type='set' id='e' to='romeo@localhost'><enable xmlns='urn:xmpp:carbons:2'/></iq>", id: "e")
        #expect(toSelf?[attribute: "type"] == "result")
        #expect(romeo.session.state[Carbons.Enabled.self] == true)
        let info = romeo.request("<iq type='get' id='d' to='localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>", id: "d")
        #expect(info?.child("query", namespace: NS.discoInfo)?.elements.contains { $0[attribute: "var"] == NS.carbons } == true)
    }

    @Test func sentMessagesAreCopiedToTheOtherResourcesFromTheBareJID() throws {
        let (_, orchard, hall, juliet) = try setUp()
        orchard.send("<message to='juliet@localhost' type='chat' id='m1'><body>Neither, fair saint</body></message>")
        #expect(juliet.receiveElements().first?.childText("body") == "Neither, fair saint")
        #expect(orchard.receiveElements().isEmpty, "no copy for the sender")
        let copy = try hall.receiveOne()
        #expect(copy[attribute: "from"] == "romeo@localhost")
        #expect(copy[attribute: "to"] == "romeo@localhost/hall")
        #expect(copy[attribute: "type"] == "chat")
        let original = carbon(copy, "sent")
        #expect(original?[attribute: "from"] == "romeo@localhost/orchard")
        #expect(original?[attribute: "to"] == "juliet@localhost")
        #expect(original?[attribute: "id"] == "m1")
        #expect(original?.childText("body") == "Neither, fair saint")
    }

    @Test func receivedMessagesAreCopiedToTheResourcesThatDidNotGetThem() throws {
        let (_, orchard, hall, juliet) = try setUp()
        // To the bare JID: orchard has the higher priority.
        juliet.send("<message to='romeo@localhost' type='chat'><body>What man art thou?</body></message>")
        #expect(orchard.receiveElements().map { $0.childText("body") } == ["What man art thou?"])
        let copy = try hall.receiveOne()
        #expect(copy[attribute: "from"] == "romeo@localhost")
        #expect(copy[attribute: "to"] == "romeo@localhost/hall")
        #expect(carbon(copy, "received")?[attribute: "from"] == "juliet@localhost/balcony")
        #expect(carbon(copy, "received")?.childText("body") == "What man art thou?")
        // To a full JID: the other resource gets the copy.
        juliet.send("<message to='romeo@localhost/hall' type='chat'><body>psst</body></message>")
        #expect(hall.receiveElements().map { $0.childText("body") } == ["psst"])
        #expect(carbon(try orchard.receiveOne(), "received")?[attribute: "to"] == "romeo@localhost/hall")
    }

    @Test func resourcesOfEqualPriorityGetTheMessageItselfNotACopy() throws {
        let (_, orchard, hall, juliet) = try setUp()
        hall.send("<presence><priority>5</priority></presence>")
        _ = orchard.receive()
        _ = hall.receive()
        juliet.send("<message to='romeo@localhost' type='chat'><body>both</body></message>")
        for client in [orchard, hall] {
            let got = client.receiveElements()
            #expect(got.count == 1)
            #expect(got.first?.childText("body") == "both")
        }
    }

    @Test func onlyResourcesThatEnabledCarbonsGetCopies() throws {
        let (server, orchard, hall, juliet) = try setUp()
        let plain = server.connect()
        try plain.login("romeo", "pw", resource: "plain")
        hall.send("<iq type='set' id='off'><disable xmlns='urn:xmpp:carbons:2'/></iq>")
        _ = hall.receive()
        orchard.send("<message to='juliet@localhost' type='chat'><body>x</body></message>")
        _ = juliet.receive()
        #expect(hall.receiveElements().isEmpty)
        #expect(plain.receiveElements().isEmpty)
        // A session that replaces one starts without carbons.
        orchard.session.transportClosed()
        let again = server.connect()
        try again.login("romeo", "pw", resource: "orchard")
        #expect(again.session.state[Carbons.Enabled.self] == false)
    }

    @Test func privateAndNoCopyMessagesAreNotCopiedAndPrivateIsRemoved() throws {
        let (_, orchard, hall, juliet) = try setUp()
        orchard.send("<message to='juliet@localhost' type='chat'><body>secret</body><private xmlns='urn:xmpp:carbons:2'/></message>")
        let delivered = juliet.receiveElements().first
        #expect(delivered?.childText("body") == "secret")
        #expect(delivered?.child("private", namespace: NS.carbons) == nil)
        orchard.send("<message to='juliet@localhost' type='chat'><body>quiet</body><no-copy xmlns='urn:xmpp:hints'/></message>")
        #expect(juliet.receiveElements().first?.child("no-copy", namespace: NS.hints) != nil)
        juliet.send("<message to='romeo@localhost' type='chat'><body>for one</body><private xmlns='urn:xmpp:carbons:2'/></message>")
        #expect(orchard.receiveElements().first?.child("private", namespace: NS.carbons) == nil)
        #expect(hall.receiveElements().isEmpty)
    }

    @Test(arguments: [
        ("<message to='juliet@localhost' type='normal'><body>a letter</body></message>", true),
        ("<message to='juliet@localhost'><body>untyped is normal</body></message>", true),
        ("<message to='juliet@localhost' type='normal'><active xmlns='http://jabber.org/protocol/chatstates'/></message>", false),
        ("<message to='juliet@localhost' type='chat'><active xmlns='http://jabber.org/protocol/chatstates'/></message>", true),
        ("<message to='juliet@localhost' type='headline'><body>news</body></message>", false),
        ("<message to='juliet@localhost/balcony' type='groupchat'><body>all</body></message>", false),
        ("<message to='juliet@localhost/balcony' type='error'><error type='cancel'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>", false),
        ("<message to='juliet@localhost' type='chat'><received xmlns='urn:xmpp:carbons:2'/><body>relayed</body></message>", false),
    ])
    func eligibility(_ message: String, _ copied: Bool) throws {
        let (_, orchard, hall, _) = try setUp()
        orchard.send(message)
        #expect(!hall.receiveElements().filter { $0.child("sent", namespace: NS.carbons) != nil }.isEmpty == copied)
    }

    @Test func aMessageKeptOfflineIsNotCopied() throws {
        let (server, _, juliet) = try romeoAndJuliet()
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        _ = phone.request("<iq type='set' id='c'><enable xmlns='urn:xmpp:carbons:2'/></iq>", id: "c")
        juliet.send("<message to='romeo@localhost' type='chat'><body>later</body></message>")
        #expect(phone.receiveElements().isEmpty, "no available resource: stored, not copied")
        phone.send("<presence/>")
        #expect(phone.receiveElements().filter { $0.name == "message" }.map { $0.childText("body") } == ["later"])
    }

    @Test func aRefusedMessageIsNotCopied() throws {
        let (_, orchard, hall, _) = try setUp()
        orchard.send("<iq type='set' id='b'><block xmlns='urn:xmpp:blocking'><item jid='juliet@localhost'/></block></iq>")
        _ = orchard.receive()
        orchard.send("<message to='juliet@localhost' type='chat'><body>no</body></message>")
        #expect(hall.receiveElements().isEmpty)
    }
}
