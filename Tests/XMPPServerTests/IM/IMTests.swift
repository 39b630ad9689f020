import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// RFC 6121 end to end on the in-memory server: roster, subscriptions,
/// presence and message delivery between two users.
@Suite struct IMTests {
    private func couple() throws -> (TestServer, TestClient, TestClient) { try romeoAndJuliet() }

    private func rosterItems(_ client: TestClient) throws -> [Element] {
        client.send("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>")
        let reply = client.receiveElements().first { $0[attribute: "id"] == "r" }
        return reply?.child("query", namespace: NS.roster)?.elements ?? []
    }

    @Test func rosterAddPushAndVersioning() throws {
        let (_, romeo, _) = try couple()
        #expect(try rosterItems(romeo).isEmpty)
        romeo.send("<iq type='set' id='a'><query xmlns='jabber:iq:roster'><item jid='juliet@localhost' name='Juliet'><group>Capulets</group></item></query></iq>")
        let elements = romeo.receiveElements()
        let push = elements.first { $0[attribute: "type"] == "set" }
        let item = push?.child("query", namespace: NS.roster)?.child("item")
        #expect(item?[attribute: "jid"] == "juliet@localhost")
        #expect(item?[attribute: "subscription"] == "none")
        #expect(item?.childText("group") == "Capulets")
        #expect(push?[attribute: "to"] == "romeo@localhost/orchard")
        #expect(elements.contains { $0[attribute: "type"] == "result" && $0[attribute: "id"] == "a" })
        let version = push?.child("query", namespace: NS.roster)?[attribute: "ver"]
        // The current version gets the full roster too: XMPPFramework empties
        // its roster on an empty result (XMPPFRAMEWORK.md §7).
        romeo.send("<iq type='get' id='v'><query xmlns='jabber:iq:roster' ver='\(version ?? "")'/></iq>")
        let same = try romeo.receiveOne().child("query", namespace: NS.roster)
        #expect(same?.elements.count == 1 && same?[attribute: "ver"] == version)
        romeo.send("<iq type='get' id='v0'><query xmlns='jabber:iq:roster' ver='0'/></iq>")
        #expect(try romeo.receiveOne().child("query", namespace: NS.roster)?.elements.count == 1)
    }

    @Test(arguments: [
        ("<item jid='a@localhost'/><item jid='b@localhost'/>", "bad-request"),
        ("<item jid='romeo@localhost'/>", "not-allowed"),
        ("<item jid='a@localhost'><group/></item>", "not-acceptable"),
        ("<item jid='a@@localhost'/>", "bad-request"),
        ("<item jid='nobody@localhost' subscription='remove'/>", "item-not-found"),
    ])
    func badRosterSets(_ items: String, _ condition: String) throws {
        let (_, romeo, _) = try couple()
        romeo.send("<iq type='set' id='x'><query xmlns='jabber:iq:roster'>\(items)</query></iq>")
        #expect(try romeo.receiveOne().child("error")?.child(condition, namespace: NS.stanzas) != nil)
    }

    /// The seed apps' friend flow: add (roster set + subscribe), accept
    /// (subscribed + subscribe back), both end with `both` and see each
    /// other's presence.
    /// RFC 6121 §2.1.2.5: a client cannot set a subscription state; any
    /// value but "remove" is ignored, not refused.
    @Test func subscriptionValuesOtherThanRemoveAreIgnored() throws {
        let (_, romeo, _) = try couple()
        romeo.send("<iq type='set' id='s'><query xmlns='jabber:iq:roster'><item jid='juliet@localhost' subscription='both'/></query></iq>")
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "s" && $0[attribute: "type"] == "result" })
        #expect(try rosterItems(romeo).first?[attribute: "subscription"] == "none")
    }

    @Test func subscriptionHandshakeAndPresence() throws {
        let (_, romeo, juliet) = try couple()
        _ = try rosterItems(romeo)
        _ = try rosterItems(juliet)
        romeo.send("<presence/>")
        juliet.send("<presence/>")
        _ = romeo.receive()
        _ = juliet.receive()

        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        let ask = romeo.receiveElements().first { $0.name == "iq" }?.child("query", namespace: NS.roster)?.child("item")
        #expect(ask?[attribute: "ask"] == "subscribe")
        let request = juliet.receiveElements().first { $0.name == "presence" }
        #expect(request?[attribute: "type"] == "subscribe")
        #expect(request?[attribute: "from"] == "romeo@localhost")

        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        let romeoGot = romeo.receiveElements()
        #expect(romeoGot.contains { $0.name == "presence" && $0[attribute: "type"] == "subscribed" })
        #expect(romeoGot.contains { $0.name == "presence" && $0[attribute: "type"] == nil && $0[attribute: "from"] == "juliet@localhost/balcony" },
                "juliet's current presence follows her approval")
        romeo.send("<presence type='subscribed' to='juliet@localhost'/>")
        _ = juliet.receive()

        let items = try rosterItems(romeo)
        #expect(items.first?[attribute: "subscription"] == "both")
        #expect(try rosterItems(juliet).first?[attribute: "subscription"] == "both")

        // An update reaches the subscriber; a disconnect sends unavailable.
        juliet.send("<presence><show>away</show></presence>")
        #expect(romeo.receiveElements().contains { $0.childText("show") == "away" })
        juliet.session.transportClosed()
        let gone = romeo.receiveElements().first { $0.name == "presence" }
        #expect(gone?[attribute: "type"] == "unavailable")
        #expect(gone?[attribute: "from"] == "juliet@localhost/balcony")
    }

    @Test func pendingRequestIsRedeliveredAtLogin() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        romeo.send("<presence type='subscribe' to='juliet@localhost'><status>It is I</status></presence>")
        for _ in 0..<2 {
            let juliet = server.connect()
            try juliet.login("juliet", "pw")
            juliet.send("<presence/>")
            let request = juliet.receiveElements().first { $0[attribute: "type"] == "subscribe" }
            #expect(request?[attribute: "from"] == "romeo@localhost")
            #expect(request?.childText("status") == "It is I")
            juliet.send("</stream:stream>")
        }
    }

    /// A request too large to keep whole (its status) is redelivered bare.
    @Test func aLargePendingRequestIsRedeliveredWithoutItsStatus() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        let status = String(repeating: "w", count: Subscriptions.maxStoredRequestSize)
        romeo.send("<presence type='subscribe' to='juliet@localhost'><status>\(status)</status></presence>")
        let juliet = server.connect()
        try juliet.login("juliet", "pw")
        juliet.send("<presence/>")
        let request = juliet.receiveElements().first { $0[attribute: "type"] == "subscribe" }
        #expect(request?[attribute: "from"] == "romeo@localhost")
        #expect(request?.childText("status") == nil)
    }

    @Test func messageToBareJIDGoesToTheHighestPriorityResource() throws {
        let (server, romeo, juliet) = try couple()
        let other = server.connect()
        try other.login("juliet", "pw", resource: "chamber")
        juliet.send("<presence><priority>5</priority></presence>")
        other.send("<presence><priority>1</priority></presence>")
        _ = juliet.receive()
        _ = other.receive()
        romeo.send("<message to='juliet@localhost' type='chat' from='spoofed@evil'><body>Hi</body></message>")
        let got = juliet.receiveElements().first { $0.name == "message" }
        #expect(got?.childText("body") == "Hi")
        #expect(got?[attribute: "from"] == "romeo@localhost/orchard", "the server stamps from")
        #expect(other.receiveElements().isEmpty)
        // A full JID reaches exactly that resource.
        romeo.send("<message to='juliet@localhost/chamber' type='chat'><body>You there?</body></message>")
        #expect(other.receiveElements().first?.childText("body") == "You there?")
    }

    @Test func messageToUnknownUserIsServiceUnavailable() throws {
        let (_, romeo, _) = try couple()
        romeo.send("<message to='nobody@localhost' type='chat' id='m1'><body>Hello?</body></message>")
        let reply = try romeo.receiveOne()
        #expect(reply[attribute: "type"] == "error")
        #expect(reply.child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
    }

    @Test func offlineMessagesAreDeliveredAtNextPresenceWithADelay() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        for index in 1...3 {
            romeo.send("<message to='juliet@localhost' type='chat'><body>note \(index)</body></message>")
        }
        romeo.send("<message to='juliet@localhost' type='chat'><active xmlns='http://jabber.org/protocol/chatstates'/></message>")
        #expect(romeo.receiveElements().isEmpty, "stored, no error")
        let juliet = server.connect()
        try juliet.login("juliet", "pw")
        juliet.send("<presence/>")
        let messages = juliet.receiveElements().filter { $0.name == "message" }
        #expect(messages.map { $0.childText("body") } == ["note 1", "note 2", "note 3"])
        #expect(messages.allSatisfy { $0.child("delay", namespace: NS.delay)?[attribute: "stamp"] != nil })
        // Delivered once: the next login finds nothing.
        juliet.send("</stream:stream>")
        let again = server.connect()
        try again.login("juliet", "pw")
        again.send("<presence/>")
        #expect(again.receiveElements().filter { $0.name == "message" }.isEmpty)
    }

    /// A message routed while the offline backlog loads (the resource is
    /// available from its initial presence on) comes after the backlog,
    /// which was sent before it.
    @Test func messagesRoutedWhileTheBacklogLoadsComeAfterIt() throws {
        let (server, romeo, juliet) = try offlineNoteForJuliet()
        juliet.deliver(Self.availableAtOnce)
        romeo.deliver("<message to='juliet@localhost' type='chat'><body>after</body></message>")
        server.loop.run()
        let messages = juliet.receiveElements().filter { $0.name == "message" }
        #expect(messages.map { $0.childText("body") } == ["before", "after"])
        #expect(messages.map { $0.child("delay", namespace: NS.delay) != nil } == [true, false])
    }

    /// A session that ends while its backlog loads hands on what waited
    /// behind it: the next login gets both, in order.
    @Test func whatWaitedBehindTheBacklogIsKeptWhenTheSessionEnds() throws {
        let (server, romeo, juliet) = try offlineNoteForJuliet()
        juliet.deliver(Self.availableAtOnce)
        romeo.deliver("<message to='juliet@localhost' type='chat'><body>after</body></message>")
        juliet.dropConnection()
        #expect(romeo.receiveElements().isEmpty, "nothing bounced")
        let again = server.connect()
        try again.login("juliet", "pw")
        again.send("<presence/>")
        #expect(again.receiveElements().filter { $0.name == "message" }.map { $0.childText("body") } == ["before", "after"])
    }

    /// What waits behind the backlog is bounded as output is
    /// (`max_queued_output`): past the bound the stream ends, and what
    /// waited is kept offline, in order, for the next login.
    @Test func whatWaitsBehindTheBacklogIsBoundedAsOutputIs() throws {
        var config = ServerConfig()
        config.limits.maxQueuedOutput = 1000
        let (server, romeo, juliet) = try offlineNoteForJuliet(config: config)
        juliet.deliver(Self.availableAtOnce)
        let padding = String(repeating: "x", count: 100)
        for index in 1...20 {
            romeo.deliver("<message to='juliet@localhost' type='chat'><body>after \(index) \(padding)</body></message>")
        }
        server.loop.run()
        #expect(juliet.receive().streamErrorCondition == "resource-constraint")
        #expect(juliet.isClosed)
        let again = server.connect()
        try again.login("juliet", "pw")
        again.send("<presence/>")
        let bodies = again.receiveElements().filter { $0.name == "message" }.compactMap { $0.childText("body") }
        #expect(bodies == ["before"] + (1...20).map { "after \($0) \(padding)" })
    }

    /// Initial presence that makes its resource available as it is read:
    /// with its own XEP-0153 photo hash, the server reads no vCard first.
    private static let availableAtOnce = "<presence><x xmlns='vcard-temp:x:update'><photo/></x></presence>"

    /// Romeo online, Juliet logged in but not yet available, one message
    /// ("before") stored for her.
    private func offlineNoteForJuliet(config: ServerConfig = ServerConfig()) throws -> (TestServer, TestClient, TestClient) {
        let (server, romeo, juliet) = try romeoAndJuliet(config: config)
        romeo.send("<message to='juliet@localhost' type='chat'><body>before</body></message>")
        #expect(romeo.receiveElements().isEmpty && juliet.receiveElements().isEmpty, "stored")
        return (server, romeo, juliet)
    }

    @Test func negativePriorityGetsNoBareJIDMessages() throws {
        let (_, romeo, juliet) = try couple()
        juliet.send("<presence><priority>-1</priority></presence>")
        _ = juliet.receive()
        romeo.send("<message to='juliet@localhost' type='chat'><body>stored</body></message>")
        #expect(juliet.receiveElements().isEmpty)
    }

    /// RFC 6121 §3.4: romeo approves juliet before she asks; her request
    /// is then answered by the server at once.
    @Test func preApprovalAnswersTheLaterRequest() throws {
        let (_, romeo, juliet) = try couple()
        _ = try rosterItems(romeo)
        _ = try rosterItems(juliet)
        juliet.send("<presence/>")
        _ = juliet.receive()
        romeo.send("<presence type='subscribed' to='juliet@localhost'/>")
        #expect(juliet.receiveElements().isEmpty, "a pre-approval is not routed")
        let approved = romeo.receiveElements().first { $0.name == "iq" }?.child("query", namespace: NS.roster)?.child("item")
        #expect(approved?[attribute: "approved"] == "true")
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        #expect(juliet.receiveElements().contains { $0.name == "presence" && $0[attribute: "type"] == "subscribed" })
        #expect(!romeo.receiveElements().contains { $0.name == "presence" && $0[attribute: "type"] == "subscribe" })
        #expect(try rosterItems(romeo).first?[attribute: "subscription"] == "from")
    }

    @Test func directedPresenceGetsUnavailableAtTheEnd() throws {
        let (_, romeo, juliet) = try couple()
        juliet.send("<presence/>")
        _ = juliet.receive()
        romeo.send("<presence/>")
        romeo.send("<presence to='juliet@localhost'><status>psst</status></presence>")
        #expect(juliet.receiveElements().first?.childText("status") == "psst")
        romeo.session.transportClosed()
        let last = juliet.receiveElements().first
        #expect(last?[attribute: "type"] == "unavailable")
        #expect(last?[attribute: "from"] == "romeo@localhost/orchard")
    }

    @Test func postAuthenticationFeaturesOfferRosterVersioningAndPreApproval() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.openStream()
        let features = try client.authenticate("romeo", "pw")
        #expect(features.child("ver", namespace: NS.rosterVersioning) != nil)
        #expect(features.child("sub", namespace: NS.preApproval) != nil)
    }

    @Test func rosterRemoveCancelsBothSubscriptions() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        #expect(try rosterItems(juliet).first?[attribute: "subscription"] == "both")
        romeo.send("<iq type='set' id='rm'><query xmlns='jabber:iq:roster'><item jid='juliet@localhost' subscription='remove'/></query></iq>")
        _ = romeo.receive()
        #expect(try rosterItems(romeo).isEmpty)
        #expect(try rosterItems(juliet).first?[attribute: "subscription"] == "none")
    }
}

@Suite struct OfflineQuotaTests {
    @Test func messagesBeyondTheQuotaAreRefusedWithResourceConstraint() throws {
        var config = ServerConfig()
        config.limits.offlineQuota = 2
        let server = try TestServer(config: config)
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        for index in 1...3 {
            romeo.send("<message to='juliet@localhost' type='chat' id='m\(index)'><body>\(index)</body></message>")
        }
        let errors = romeo.receiveElements()
        #expect(errors.count == 1)
        #expect(errors.first?[attribute: "id"] == "m3")
        #expect(errors.first?.child("error")?.child("resource-constraint", namespace: NS.stanzas) != nil)
    }
}

@Suite struct OwnPresenceTests {
    /// RFC 6121 §4.2.2: the sending resource gets its own presence back.
    @Test func initialPresenceIsReflectedToTheSender() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw", resource: "orchard")
        romeo.send("<presence/>")
        let echo = romeo.receiveElements().first { $0.name == "presence" }
        #expect(echo?[attribute: "from"] == "romeo@localhost/orchard")
    }
}

/// RFC 6121 §8.5 and RFC 6120 §10 routing rules beyond chat.
@Suite struct RoutingRuleTests {
    /// Romeo and juliet logged in, juliet available.
    private func couple() throws -> (TestServer, TestClient, TestClient) {
        let (server, romeo, juliet) = try romeoAndJuliet()
        juliet.send("<presence/>")
        _ = juliet.receive()
        return (server, romeo, juliet)
    }

    @Test func groupchatToABareJIDIsServiceUnavailable() throws {
        let (_, romeo, juliet) = try couple()
        romeo.send("<message to='juliet@localhost' type='groupchat'><body>all</body></message>")
        #expect(try romeo.receiveOne().child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
        #expect(juliet.receiveElements().isEmpty)
    }

    @Test func headlineGoesToEveryAvailableResource() throws {
        let (server, romeo, juliet) = try couple()
        let other = server.connect()
        try other.login("juliet", "pw", resource: "chamber")
        other.send("<presence><priority>1</priority></presence>")
        _ = other.receive()
        _ = juliet.receive()
        romeo.send("<message to='juliet@localhost' type='headline'><body>news</body></message>")
        #expect(juliet.receiveElements().first?.childText("body") == "news")
        #expect(other.receiveElements().first?.childText("body") == "news")
    }

    @Test func iqToAnotherUsersBareJIDIsAnsweredByTheServer() throws {
        let (_, romeo, juliet) = try couple()
        romeo.send("<iq type='get' id='q' to='juliet@localhost'><query xmlns='urn:example:unknown'/></iq>")
        let reply = try romeo.receiveOne()
        #expect(reply[attribute: "from"] == "juliet@localhost")
        #expect(reply.child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
        #expect(juliet.receiveElements().isEmpty)
    }

    @Test func iqToAConnectedFullJIDIsDeliveredAndToAGoneOneBounced() throws {
        let (_, romeo, juliet) = try couple()
        romeo.send("<iq type='get' id='v' to='juliet@localhost/balcony'><query xmlns='jabber:iq:version'/></iq>")
        let delivered = juliet.receiveElements().first
        #expect(delivered?[attribute: "from"] == "romeo@localhost/orchard")
        romeo.send("<iq type='get' id='w' to='juliet@localhost/gone'><query xmlns='jabber:iq:version'/></iq>")
        #expect(try romeo.receiveOne().child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
    }

    @Test func probeAnswerForAnUnavailableContactIsUnavailable() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        try server.addUser("juliet", password: "pw")
        let romeo = server.connect()
        try romeo.login("romeo", "pw")
        let juliet = server.connect()
        try juliet.login("juliet", "pw")
        for client in [romeo, juliet] {
            client.send("<iq type='get' id='r'><query xmlns='jabber:iq:roster'/></iq>")
        }
        romeo.send("<presence type='subscribe' to='juliet@localhost'/>")
        juliet.send("<presence type='subscribed' to='romeo@localhost'/>")
        juliet.send("</stream:stream>")
        _ = romeo.receive()
        romeo.send("<presence/>")
        let answer = romeo.receiveElements().first { $0[attribute: "from"] == "juliet@localhost" }
        #expect(answer?[attribute: "type"] == "unavailable")
    }
}

@Suite struct ClientStateIndicationTests {
    /// XMPPFramework sends CSI without checking the feature: it must never
    /// end the stream.
    @Test func csiNonzasAreAcceptedAndRecorded() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        try client.openStream()
        let features = try client.authenticate("romeo", "pw")
        #expect(features.child("csi", namespace: NS.csi) != nil)
        try client.bind("phone")
        client.send("<inactive xmlns='urn:xmpp:csi:0'/>")
        #expect(client.session.state[ClientStateIndication.Inactive.self])
        client.send("<active xmlns='urn:xmpp:csi:0'/>")
        #expect(!client.session.state[ClientStateIndication.Inactive.self])
        #expect(client.receiveElements().isEmpty)
        #expect(!client.isClosed)
    }
}

/// XMPPFRAMEWORK.md §6 and §14: what XMPPFramework sends right after login
/// gets an answer each.
@Suite struct XMPPFrameworkLoginTests {
    /// XEP-0136 preferences: an error makes XMPPFramework keep its local
    /// archive, and is no reason to end the stream.
    @Test func archivingPreferencesAreNotImplemented() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = romeo.request("<iq type='get' id='pref1'><pref xmlns='urn:xmpp:archive'/></iq>", id: "pref1")
        #expect(reply?[attribute: "type"] == "error")
        #expect(reply?.errorCondition == "feature-not-implemented")
        #expect(reply?.child("pref", namespace: NS.archive) != nil, "the request comes back with the error")
        let set = romeo.request("<iq type='set' id='pref2'><pref xmlns='urn:xmpp:archive'><auto save='true'/></pref></iq>", id: "pref2")
        #expect(set?.errorCondition == "feature-not-implemented")
        #expect(!romeo.isClosed)
    }

    /// §6 in order: roster, carbons, own vCard, blocklist, archive
    /// preferences, then presence with an avatar hash; every request is
    /// answered and the stream stays up.
    @Test func everyRequestAfterLoginIsAnswered() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        romeo.send("<iq type='get' id='1'><query xmlns='jabber:iq:roster'/></iq>")
        romeo.send("<iq type='set' id='2'><enable xmlns='urn:xmpp:carbons:2'/></iq>")
        romeo.send("<iq type='get' id='3' to='romeo@localhost'><vCard xmlns='vcard-temp'/></iq>")
        romeo.send("<iq type='get' id='4'><blocklist xmlns='urn:xmpp:blocking'/></iq>")
        romeo.send("<iq type='get' id='5'><pref xmlns='urn:xmpp:archive'/></iq>")
        romeo.send("<presence><x xmlns='vcard-temp:x:update'><photo/></x></presence>")
        let replies = romeo.receiveElements().filter { $0.name == "iq" }
        #expect(replies.map { $0[attribute: "id"] } == ["1", "2", "3", "4", "5"])
        #expect(replies.map { $0[attribute: "type"] } == ["result", "result", "result", "result", "error"])
        #expect(!romeo.isClosed)
    }
}
