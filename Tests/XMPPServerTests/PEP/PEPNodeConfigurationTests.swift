import Synchronization
import Testing
import XMPPCore
import XMPPStorage
@testable import XMPPServer
import XMPPTestSupport

/// PEP nodes as OMEMO and bookmarks clients use them: node configuration
/// (XEP-0060 §8.2), publish-options with every field, whitelist nodes
/// (XEP-0223), several items with generated ids, purge, the account's
/// nodes in disco#items, and how notifications and last items follow the
/// configuration.
@Suite struct PEPNodeConfigurationTests {
    static let tune = "http://jabber.org/protocol/tune"
    static let song = "<tune xmlns='http://jabber.org/protocol/tune'><title>Greensleeves</title></tune>"
    static let bookmarks = "urn:xmpp:bookmarks:1"
    /// What Conversations, Dino and Gajim ask for when publishing bookmarks.
    static let bookmarkOptions = [
        "pubsub#persist_items": "true", "pubsub#max_items": "max", "pubsub#send_last_published_item": "never",
        "pubsub#access_model": "whitelist",
    ]

    static func bookmark(_ name: String) -> String {
        "<conference xmlns='\(bookmarks)' name='\(name)' autojoin='true'><nick>r</nick></conference>"
    }

    static func notifications(_ elements: [Element]) -> [Element] {
        elements.filter { $0.name == "message" && $0[attribute: "type"] == "headline" }
    }

    /// The first `<item/>` of a notification's `<items/>`.
    static func eventItem(_ message: Element) -> Element? {
        message.child("event", namespace: NS.pubsubEvent)?.child("items", namespace: NS.pubsubEvent)?
            .child("item", namespace: NS.pubsubEvent)
    }

    /// The disco#items of `account`, as `client` sees them: node by name.
    static func nodes(at account: String, by client: TestClient) -> [String: String?] {
        let reply = client.request(
            "<iq type='get' id='items' to='\(account)'><query xmlns='\(NS.discoItems)'/></iq>", id: "items")
        let items = reply?.child("query", namespace: NS.discoItems)?.elements ?? []
        return Dictionary(uniqueKeysWithValues: items.compactMap { item in
            item[attribute: "node"].map { ($0, item[attribute: "name"]) }
        })
    }

    // MARK: - Configuration

    @Test func theOwnerReadsAndChangesTheNodeConfiguration() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        _ = romeo.publish(Self.song, to: Self.tune, id: "current")
        let initial = try #require(romeo.configuration(of: Self.tune))
        #expect(initial["FORM_TYPE"] == NS.pubsubNodeConfig)
        #expect(initial["pubsub#access_model"] == "presence")
        #expect(initial["pubsub#max_items"] == "1")
        #expect(initial["pubsub#send_last_published_item"] == "on_sub_and_presence")
        #expect(initial["pubsub#notify_retract"] == "1")
        let changed = romeo.configure(
            Self.tune, ["pubsub#title": "Nice tunes", "pubsub#max_items": "max", "pubsub#access_model": "open"])
        #expect(changed?[attribute: "type"] == "result")
        let now = try #require(romeo.configuration(of: Self.tune))
        #expect(now["pubsub#title"] == "Nice tunes")
        #expect(now["pubsub#max_items"] == "256", "max is pep_max_items")
        #expect(now["pubsub#access_model"] == "open")
        #expect(Self.nodes(at: "romeo@localhost", by: romeo) == [Self.tune: "Nice tunes"])
        #expect(romeo.configure(Self.tune, ["pubsub#max_items": "257"])?.errorCondition == "not-acceptable")
        let roster = try #require(romeo.configure(Self.tune, ["pubsub#access_model": "roster"]))
        #expect(roster.unsupportedFeature == "access-roster")
        #expect(romeo.configure(Self.tune, ["pubsub#notification_type": "normal"])?.errorCondition == "not-acceptable")
        #expect(romeo.configure("missing", ["pubsub#title": "x"])?.errorCondition == "item-not-found")
        #expect(juliet.configure(Self.tune, ["pubsub#title": "mine"], to: "romeo@localhost")?.errorCondition == "forbidden")
        #expect(romeo.configuration(of: Self.tune)?["pubsub#title"] == "Nice tunes", "refused changes change nothing")
    }

    @Test func theDefaultConfigurationIsAForm() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = romeo.request(
            "<iq type='get' id='d'><pubsub xmlns='\(NS.pubsubOwner)'><default/></pubsub></iq>", id: "d")
        let form = reply?.child("pubsub", namespace: NS.pubsubOwner)?.child("default", namespace: NS.pubsubOwner)?
            .child("x", namespace: NS.dataForms).flatMap(DataForm.init)
        #expect(form?.formType == NS.pubsubNodeConfig)
        #expect(form?.fields.first { $0.name == "pubsub#access_model" }?.values == ["presence"])
    }

    // MARK: - Publish-options

    @Test func bookmarksOptionsCreateTheNodeAndAreThenPreconditions() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let first = romeo.publish(Self.bookmark("Play"), to: Self.bookmarks, id: "play@muc", options: Self.bookmarkOptions)
        #expect(first?[attribute: "type"] == "result")
        let second = romeo.publish(Self.bookmark("Orchard"), to: Self.bookmarks, id: "orchard@muc", options: Self.bookmarkOptions)
        #expect(second?[attribute: "type"] == "result", "the same options hold")
        #expect(romeo.items(of: Self.bookmarks, at: "romeo@localhost")?.pubsubItemIDs == ["orchard@muc", "play@muc"])
        let configuration = try #require(romeo.configuration(of: Self.bookmarks))
        #expect(configuration["pubsub#access_model"] == "whitelist")
        #expect(configuration["pubsub#send_last_published_item"] == "never")
        #expect(configuration["pubsub#max_items"] == "256")
        let open = try #require(romeo.publish(Self.bookmark("x"), to: Self.bookmarks, options: ["pubsub#access_model": "open"]))
        #expect(open.errorCondition == "conflict")
        #expect(open.pubsubCondition == "precondition-not-met")
        #expect(open.child("error")?.child("text", namespace: NS.stanzas)?.text.contains("access_model") == true)
        let never = try #require(romeo.publish(Self.song, to: Self.tune, options: ["pubsub#send_last_published_item": "on_sub"]))
        #expect(never[attribute: "type"] == "result", "a new node takes the option")
        #expect(romeo.publish(Self.song, to: Self.tune, options: ["pubsub#send_last_published_item": "never"])?.pubsubCondition == "precondition-not-met")
    }

    @Test func itemsWithoutIDsGetDistinctGeneratedOnes() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        var ids: [String] = []
        for _ in 0..<2 {
            let reply = romeo.publish(Self.song, to: Self.tune, options: ["pubsub#max_items": "10"])
            let id = reply?.child("pubsub", namespace: NS.pubsub)?.child("publish", namespace: NS.pubsub)?
                .child("item", namespace: NS.pubsub)?[attribute: "id"]
            ids.append(try #require(id))
        }
        #expect(Set(ids).count == 2)
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == ids.reversed())
    }

    // MARK: - Access

    @Test func aWhitelistNodeIsTheOwnersAlone() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        juliet.announce(TestCaps(notify: [Self.bookmarks]))
        romeo.announce(TestCaps(notify: [Self.bookmarks]))
        romeo.send(TestClient.publishing(Self.bookmark("Play"), to: Self.bookmarks, id: "play@muc", options: Self.bookmarkOptions))
        let own = romeo.receiveElements()
        #expect(own.contains { $0.name == "iq" && $0[attribute: "type"] == "result" })
        #expect(Self.notifications(own).count == 1, "the owner's own resource hears of it")
        #expect(Self.notifications(juliet.receiveElements()).isEmpty, "a contact does not")
        let refused = try #require(juliet.items(of: Self.bookmarks, at: "romeo@localhost"))
        #expect(refused.errorCondition == "not-allowed")
        #expect(refused.pubsubCondition == "closed-node")
        #expect(Self.nodes(at: "romeo@localhost", by: juliet).isEmpty)
        #expect(Self.nodes(at: "romeo@localhost", by: romeo).keys.sorted() == [Self.bookmarks])
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        #expect(Self.nodes(at: "romeo@localhost", by: juliet).keys.sorted() == [Self.tune], "presence lets contacts see it")
    }

    @Test func strangersCannotTellAnAccountsNodesFromNoAccount() throws {
        let (_, romeo, _, mercutio) = try romeoJulietAndAStranger()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t", options: ["pubsub#access_model": "open"])
        for account in ["romeo@localhost", "nobody@localhost"] {
            let reply = mercutio.request(
                "<iq type='get' id='items' to='\(account)'><query xmlns='\(NS.discoItems)'/></iq>", id: "items")
            #expect(reply?.errorCondition == "service-unavailable", "\(account)")
        }
        #expect(mercutio.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == ["t"], "an open node is still readable")
    }

    // MARK: - Notifications

    @Test func purgeEmptiesTheNodeAndTellsTheInterested() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        juliet.announce(TestCaps(notify: [Self.tune]))
        for id in ["a", "b"] { _ = romeo.publish(Self.song, to: Self.tune, id: id, options: ["pubsub#max_items": "5"]) }
        _ = juliet.receiveElements()
        let purge = "<iq type='set' id='p'><pubsub xmlns='\(NS.pubsubOwner)'><purge node='\(Self.tune)'/></pubsub></iq>"
        #expect(romeo.request(purge, id: "p")?[attribute: "type"] == "result")
        let event = Self.notifications(juliet.receiveElements()).first?.child("event", namespace: NS.pubsubEvent)
        #expect(event?.child("purge", namespace: NS.pubsubEvent)?[attribute: "node"] == Self.tune)
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == [])
        let byJuliet = "<iq type='set' id='p' to='romeo@localhost'><pubsub xmlns='\(NS.pubsubOwner)'><purge node='\(Self.tune)'/></pubsub></iq>"
        #expect(juliet.request(byJuliet, id: "p")?.errorCondition == "forbidden")
    }

    /// Records PEP's events, as `event node id onBehalf`.
    final class Recorder: ServerFeature, Sendable {
        let events = Mutex<[String]>([])

        func install(_ hooks: Hooks) {
            hooks.on(PEPItemPublished.self) { event in
                self.events.withLock { $0.append("published \(event.node) \(event.item[attribute: "id"] ?? "") \(event.onBehalf)") }
            }
            hooks.on(PEPItemRetracted.self) { event in
                self.events.withLock { $0.append("retracted \(event.node) \(event.itemID) \(event.onBehalf)") }
            }
        }
    }

    @Test func purgeAndDeleteTellOfEachItemRemoved() throws {
        let recorder = Recorder()
        let (_, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        for id in ["a", "b"] { _ = romeo.publish(Self.song, to: Self.tune, id: id, options: ["pubsub#max_items": "5"]) }
        let purge = "<iq type='set' id='p'><pubsub xmlns='\(NS.pubsubOwner)'><purge node='\(Self.tune)'/></pubsub></iq>"
        #expect(romeo.request(purge, id: "p")?[attribute: "type"] == "result")
        _ = romeo.publish(Self.song, to: Self.tune, id: "c")
        let delete = "<iq type='set' id='d'><pubsub xmlns='\(NS.pubsubOwner)'><delete node='\(Self.tune)'/></pubsub></iq>"
        #expect(romeo.request(delete, id: "d")?[attribute: "type"] == "result")
        #expect(
            recorder.events.withLock { $0 } == [
                "published \(Self.tune) a false", "published \(Self.tune) b false",
                "retracted \(Self.tune) b false", "retracted \(Self.tune) a false",
                "published \(Self.tune) c false", "retracted \(Self.tune) c false",
            ])
    }

    @Test func notificationsFollowDeliverPayloadsAndItemReply() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        juliet.announce(TestCaps(notify: [Self.tune]))
        _ = romeo.publish(Self.song, to: Self.tune, id: "a")
        let full = try #require(Self.notifications(juliet.receiveElements()).first.flatMap(Self.eventItem))
        #expect(full.elements.count == 1)
        #expect(full[attribute: "publisher"] == nil)
        #expect(romeo.configure(Self.tune, ["pubsub#deliver_payloads": "0", "pubsub#itemreply": "publisher"])?[attribute: "type"] == "result")
        _ = romeo.publish(Self.song, to: Self.tune, id: "b")
        let bare = try #require(Self.notifications(juliet.receiveElements()).first.flatMap(Self.eventItem))
        #expect(bare[attribute: "id"] == "b")
        #expect(bare.elements.isEmpty, "no payload")
        #expect(bare[attribute: "publisher"] == "romeo@localhost")
    }

    @Test func theNotificationComesBeforeThePublishersResult() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        romeo.send("<presence/>")
        romeo.announce(TestCaps(notify: [Self.bookmarks]))
        romeo.send(TestClient.publishing(Self.bookmark("X"), to: Self.bookmarks, id: "x"))
        let received = romeo.receiveElements()
        #expect(received.map(\.name) == ["message", "iq"], "as Prosody sends them (bookmarks2.scs)")
    }

    @Test func lastItemsAtInterestCarryADelayUnlessTheNodeSaysNever() throws {
        let (server, romeo, _) = try romeoAndJulietAsContacts()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        _ = romeo.publish(
            "<mood xmlns='http://jabber.org/protocol/mood'><happy/></mood>", to: "http://jabber.org/protocol/mood", id: "m",
            options: ["pubsub#send_last_published_item": "never"])
        let window = server.connect()
        try window.login("juliet", "pw", resource: "window")
        let last = Self.notifications(window.announce(TestCaps(notify: [Self.tune, "http://jabber.org/protocol/mood"])))
        #expect(last.map(\.pubsubItemIDs) == [["t"]], "mood sends its last item never")
        let delay = last.first?.child("delay", namespace: NS.delay)
        #expect(delay?[attribute: "from"] == "romeo@localhost")
        #expect(delay?[attribute: "stamp"]?.hasSuffix("Z") == true)
    }

    @Test func anApprovedContactGetsTheLastItemsAtOnce() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        for client in [romeo, juliet] {
            client.send("<iq type='get' id='roster'><query xmlns='jabber:iq:roster'/></iq>")
            _ = client.receiveElements()
        }
        juliet.announce(TestCaps(notify: [Self.tune]))
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        romeo.send("<presence/>")
        _ = romeo.receiveElements()
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        _ = romeo.receiveElements()
        #expect(Self.notifications(juliet.receiveElements()).isEmpty, "not yet allowed")
        romeo.send("<presence type='subscribed' to='juliet@localhost'/>")
        let received = Self.notifications(juliet.receiveElements())
        #expect(received.map(\.pubsubItemIDs) == [["t"]], "without reconnecting")
        #expect(received.first?[attribute: "from"] == "romeo@localhost")
    }

    // MARK: - Capabilities queries

    @Test func aContactsServiceAsksTooAndItsAnswerBringsItsLastItems() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        _ = juliet.publish(Self.song, to: Self.tune, id: "own")
        let caps = TestCaps(notify: [Self.tune])
        juliet.send("<presence>\(caps.element)</presence>")
        let received = juliet.receiveElements()
        let queries = received.filter { $0.name == "iq" && $0[attribute: "type"] == "get" }
        #expect(queries.map { $0[attribute: "from"] } == ["juliet@localhost", "romeo@localhost"])
        #expect(queries.allSatisfy { $0[attribute: "id"] == "disco" })
        #expect(received.firstIndex { $0.name == "presence" }! < received.lastIndex { $0.name == "iq" }!, "romeo's service asks once the presence reached it")
        let info = caps.info.replacingOccurrences(
            of: "<query xmlns='\(NS.discoInfo)'>", with: "<query xmlns='\(NS.discoInfo)' node='\(TestCaps.node)#\(caps.ver)'>")
        juliet.send("<iq type='result' id='disco' to='juliet@localhost'>\(info)</iq>")
        #expect(
            Self.notifications(juliet.receiveElements()).map(\.pubsubItemIDs) == [["own"]],
            "the first answer tells the interests; romeo's items wait for his service's answer")
        juliet.send("<iq type='result' id='disco' to='romeo@localhost'>\(info)</iq>")
        #expect(Self.notifications(juliet.receiveElements()).map(\.pubsubItemIDs) == [["t"]], "romeo's service sends its own, once")
        juliet.send("<iq type='result' id='disco' to='romeo@localhost'>\(info)</iq>")
        #expect(Self.notifications(juliet.receiveElements()).isEmpty, "answered already")
    }

    // MARK: - Events

    /// Observes PEP's events; mirrors every item published in `tune` into
    /// `mirror` and retracts it there too, by PEP's requests.
    final class Mirror: ServerFeature, Sendable {
        static let node = "urn:swiftlet:test:mirror"
        let events = Mutex<[String]>([])

        func install(_ hooks: Hooks) {
            hooks.on(PEPItemPublished.self) { event in
                self.events.withLock { $0.append("published \(event.node) \(event.item[attribute: "id"] ?? "") \(event.onBehalf)") }
                guard event.node == PEPNodeConfigurationTests.tune else { return }
                hooks.fire(
                    PEPPublishRequest(
                        owner: event.owner, node: Self.node, item: event.item,
                        configuration: PEPNodeConfiguration(accessModel: .open, maxItems: 5), session: event.session))
            }
            hooks.on(PEPItemRetracted.self) { event in
                self.events.withLock { $0.append("retracted \(event.node) \(event.itemID) \(event.onBehalf)") }
                guard event.node == PEPNodeConfigurationTests.tune else { return }
                hooks.fire(PEPRetractRequest(owner: event.owner, node: Self.node, itemID: event.itemID, session: event.session))
            }
        }
    }

    /// Republishes each item published in `tune` into the bookmarks node
    /// by a `PEPPublishRequest` that enforces a whitelist configuration.
    final class Enforcer: ServerFeature, Sendable {
        func install(_ hooks: Hooks) {
            hooks.on(PEPItemPublished.self) { event in
                guard event.node == PEPNodeConfigurationTests.tune else { return }
                hooks.fire(
                    PEPPublishRequest(
                        owner: event.owner, node: PEPNodeConfigurationTests.bookmarks, item: event.item,
                        configuration: PEPNodeConfiguration(accessModel: .whitelist, maxItems: 10),
                        enforcesConfiguration: true, session: event.session))
            }
        }
    }

    @Test func aRequestThatEnforcesItsConfigurationChangesTheNodeAClientCreated() throws {
        let (_, romeo, juliet) = try romeoAndJuliet(extraFeatures: [Enforcer()])
        for client in [romeo, juliet] {
            client.send("<iq type='get' id='roster'><query xmlns='jabber:iq:roster'/></iq>")
            client.send("<presence/>")
        }
        juliet.send("<presence type='subscribe' to='romeo@localhost'/>")
        romeo.send("<presence type='subscribed' to='juliet@localhost'/>")
        _ = romeo.receiveElements()
        _ = juliet.receiveElements()
        _ = romeo.publish(Self.bookmark("Play"), to: Self.bookmarks, id: "play@muc")
        #expect(romeo.configuration(of: Self.bookmarks)?["pubsub#access_model"] == "presence")
        #expect(juliet.items(of: Self.bookmarks, at: "romeo@localhost")?.pubsubItemIDs == ["play@muc"], "a contact reads it")
        _ = romeo.publish(Self.bookmark("Orchard"), to: Self.tune, id: "orchard@muc")
        let configuration = try #require(romeo.configuration(of: Self.bookmarks))
        #expect(configuration["pubsub#access_model"] == "whitelist")
        #expect(configuration["pubsub#max_items"] == "10")
        #expect(juliet.items(of: Self.bookmarks, at: "romeo@localhost")?.errorCondition == "not-allowed")
        #expect(romeo.items(of: Self.bookmarks, at: "romeo@localhost")?.pubsubItemIDs == ["orchard@muc", "play@muc"])
    }

    @Test func changesFireEventsAndRequestsChangeNodesOnTheOwnersBehalf() throws {
        let mirror = Mirror()
        let (server, romeo, juliet) = try romeoAndJuliet(extraFeatures: [mirror])
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        juliet.send("<presence/>")
        romeo.send("<presence/>")
        _ = romeo.receiveElements()
        romeo.announce(TestCaps(notify: [Mirror.node]))
        romeo.send(TestClient.publishing(Self.song, to: Self.tune, id: "t"))
        #expect(Self.notifications(romeo.receiveElements()).map(\.pubsubItemIDs) == [["t"]], "the mirrored item is notified")
        #expect(mercutio.items(of: Mirror.node, at: "romeo@localhost")?.pubsubItemIDs == ["t"], "created with the requested access")
        let retract = "<iq type='set' id='r'><pubsub xmlns='\(NS.pubsub)'><retract node='\(Self.tune)'><item id='t'/></retract></pubsub></iq>"
        #expect(romeo.request(retract, id: "r")?[attribute: "type"] == "result")
        #expect(mercutio.items(of: Mirror.node, at: "romeo@localhost")?.pubsubItemIDs == [])
        #expect(
            mirror.events.withLock { $0 } == [
                "published \(Self.tune) t false", "published \(Mirror.node) t true",
                "retracted \(Self.tune) t false", "retracted \(Mirror.node) t true",
            ])
    }
}
