import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0163 Personal Eventing: publishing, retrieval, access, errors,
/// notifications filtered by XEP-0115 capabilities, and XEP-0084 avatars
/// over it.
@Suite struct PEPTests {
    static let tune = "http://jabber.org/protocol/tune"
    static let song = "<tune xmlns='http://jabber.org/protocol/tune'><title>Greensleeves</title></tune>"

    private static func notifications(_ elements: [Element]) -> [Element] {
        elements.filter { $0.name == "message" && $0[attribute: "type"] == "headline" }
    }

    // MARK: - Discovery

    @Test func theAccountIsAPEPServiceToItsOwnerAndContactsOnly() throws {
        let (_, romeo, juliet, mercutio) = try romeoJulietAndAStranger()
        let query = "<query xmlns='\(NS.discoInfo)'/>"
        for (client, id) in [(romeo, "own"), (juliet, "contact")] {
            let info = try #require(client.request("<iq type='get' id='\(id)' to='romeo@localhost'>\(query)</iq>", id: id))
            let answer = try #require(info.child("query", namespace: NS.discoInfo))
            let identities = answer.elements.filter { $0.name == "identity" }.map { "\($0[attribute: "category"]!)/\($0[attribute: "type"]!)" }
            #expect(identities == ["account/registered", "pubsub/pep"])
            let features = Set(answer.elements.filter { $0.name == "feature" }.compactMap { $0[attribute: "var"] })
            for feature in [
                "publish", "auto-create", "auto-subscribe", "filtered-notifications", "last-published", "publish-options",
                "retrieve-items", "access-presence", "access-open", "access-whitelist", "item-ids", "retract-items",
                "multi-items", "config-node", "purge-nodes", "subscribe",
            ] {
                #expect(features.contains("\(NS.pubsub)#\(feature)"), "\(feature) to \(id)")
            }
            #expect(!features.contains("\(NS.pubsub)#retrieve-subscriptions"), "not supported")
        }
        let stranger = mercutio.request("<iq type='get' id='s' to='romeo@localhost'>\(query)</iq>", id: "s")
        #expect(stranger?.errorCondition == "service-unavailable")
        let server = try #require(romeo.request("<iq type='get' id='d' to='localhost'>\(query)</iq>", id: "d"))
        let serverInfo = try #require(server.child("query", namespace: NS.discoInfo))
        #expect(!serverInfo.elements.contains { $0[attribute: "var"]?.hasPrefix(NS.pubsub) == true }, "the domain is no pubsub service")
        #expect(!serverInfo.elements.contains { $0[attribute: "category"] == "pubsub" })
    }

    // MARK: - Publish and retrieve

    @Test func publishingAutoCreatesTheNodeAndGeneratesAnID() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = try #require(romeo.publish(Self.song, to: Self.tune))
        #expect(reply[attribute: "type"] == "result")
        let published = try #require(reply.child("pubsub", namespace: NS.pubsub)?.child("publish", namespace: NS.pubsub))
        #expect(published[attribute: "node"] == Self.tune)
        let id = try #require(published.child("item", namespace: NS.pubsub)?[attribute: "id"])
        #expect(id.count >= 16)
        let items = try #require(romeo.items(of: Self.tune, at: "romeo@localhost"))
        #expect(items.pubsubItemIDs == [id])
        let item = items.child("pubsub", namespace: NS.pubsub)?.child("items", namespace: NS.pubsub)?.child("item", namespace: NS.pubsub)
        #expect(item?.child("tune", namespace: Self.tune)?.childText("title", namespace: Self.tune) == "Greensleeves")
        let second = romeo.publish(Self.song, to: Self.tune, id: "chosen")
        #expect(second?.child("pubsub", namespace: NS.pubsub)?.child("publish", namespace: NS.pubsub)?.child("item", namespace: NS.pubsub)?[attribute: "id"] == "chosen")
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == ["chosen"], "a new node keeps one item")
    }

    @Test func maxItemsAndItemIDsSelectItemsNewestFirst() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        for id in ["a", "b", "c"] {
            #expect(romeo.publish(Self.song, to: Self.tune, id: id, options: ["pubsub#max_items": "10"])?[attribute: "type"] == "result")
        }
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == ["c", "b", "a"])
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost", extra: " max_items='2'")?.pubsubItemIDs == ["c", "b"])
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost", children: "<item id='a'/><item id='zz'/>")?.pubsubItemIDs == ["a"])
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost", extra: " max_items='0'")?.errorCondition == "bad-request")
    }

    @Test func accessModelsDecideWhoRetrieves() throws {
        let (_, romeo, juliet, mercutio) = try romeoJulietAndAStranger()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        #expect(juliet.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == ["t"], "presence: a contact")
        let refused = try #require(mercutio.items(of: Self.tune, at: "romeo@localhost"))
        #expect(refused.errorCondition == "not-authorized")
        #expect(refused.child("error")?[attribute: "type"] == "auth")
        #expect(refused.pubsubCondition == "presence-subscription-required")
        _ = romeo.publish(Self.song, to: "open-node", id: "o", options: ["pubsub#access_model": "open"])
        #expect(mercutio.items(of: "open-node", at: "romeo@localhost")?.pubsubItemIDs == ["o"], "open: anyone")
        #expect(mercutio.items(of: "missing", at: "romeo@localhost")?.errorCondition == "item-not-found")
        #expect(mercutio.items(of: Self.tune, at: "nobody@localhost")?.errorCondition == "service-unavailable")
    }

    @Test func publishOptionsAreAppliedOrChecked() throws {
        var config = ServerConfig()
        config.limits.pepMaxItems = 5
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        #expect(romeo.publish(Self.song, to: Self.tune, id: "1", options: ["pubsub#max_items": "max", "pubsub#persist_items": "true"])?[attribute: "type"] == "result")
        let mismatch = try #require(romeo.publish(Self.song, to: Self.tune, options: ["pubsub#access_model": "open"]))
        #expect(mismatch.errorCondition == "conflict")
        #expect(mismatch.child("error")?[attribute: "type"] == "cancel")
        #expect(mismatch.pubsubCondition == "precondition-not-met")
        #expect(romeo.publish(Self.song, to: Self.tune, id: "2", options: ["pubsub#max_items": "5", "pubsub#deliver_payloads": "1"])?[attribute: "type"] == "result", "met preconditions")
        let tooMany = try #require(romeo.publish(Self.song, to: "other", options: ["pubsub#max_items": "6"]))
        #expect(tooMany.pubsubCondition == "precondition-not-met")
        let authorize = try #require(romeo.publish(Self.song, to: "other", options: ["pubsub#access_model": "authorize"]))
        #expect(authorize.errorCondition == "not-acceptable")
        #expect(authorize.unsupportedFeature == "access-authorize")
        let unknown = try #require(romeo.publish(Self.song, to: "other", options: ["pubsub#notification_type": "normal"]))
        #expect(unknown.pubsubCondition == "precondition-not-met")
        #expect(romeo.items(of: "other", at: "romeo@localhost")?.errorCondition == "item-not-found", "no node was created")
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == ["2", "1"])
    }

    @Test func retractRemovesAnItem() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t", options: ["pubsub#max_items": "2"])
        let retract = "<iq type='set' id='r'><pubsub xmlns='\(NS.pubsub)'><retract node='\(Self.tune)'><item id='t'/></retract></pubsub></iq>"
        #expect(romeo.request(retract, id: "r")?[attribute: "type"] == "result")
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == [])
        #expect(romeo.request(retract, id: "r")?.errorCondition == "item-not-found")
        let noItem = romeo.request("<iq type='set' id='r2'><pubsub xmlns='\(NS.pubsub)'><retract node='\(Self.tune)'/></pubsub></iq>", id: "r2")
        #expect(noItem?.pubsubCondition == "item-required")
    }

    @Test func requestsAreAnsweredWithPubsubErrors() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        let foreign = romeo.request("<iq type='set' id='f' to='juliet@localhost'><pubsub xmlns='\(NS.pubsub)'><publish node='n'><item>\(Self.song)</item></publish></pubsub></iq>", id: "f")
        #expect(foreign?.errorCondition == "forbidden")
        #expect(juliet.items(of: "n", at: "juliet@localhost")?.errorCondition == "item-not-found", "nothing was published")
        let cases: [(String, String, String?, String?)] = [
            ("<iq type='set' id='x' to='juliet@localhost'><pubsub xmlns='\(NS.pubsub)'><subscribe node='n' jid='romeo@localhost'/></pubsub></iq>", "item-not-found", nil, nil),
            ("<iq type='set' id='x' to='juliet@localhost'><pubsub xmlns='\(NS.pubsub)'><options node='n' jid='romeo@localhost'/></pubsub></iq>", "feature-not-implemented", nil, "subscription-options"),
            ("<iq type='get' id='x'><pubsub xmlns='\(NS.pubsub)'><subscriptions/></pubsub></iq>", "feature-not-implemented", nil, "retrieve-subscriptions"),
            ("<iq type='get' id='x'><pubsub xmlns='\(NS.pubsubOwner)'><affiliations node='n'/></pubsub></iq>", "feature-not-implemented", nil, "modify-affiliations"),
            ("<iq type='get' id='x'><pubsub xmlns='\(NS.pubsubOwner)'><configure node='n'/></pubsub></iq>", "item-not-found", nil, nil),
            ("<iq type='set' id='x'><pubsub xmlns='\(NS.pubsubOwner)'><purge node='n'/></pubsub></iq>", "item-not-found", nil, nil),
            ("<iq type='get' id='x' to='juliet@localhost'><pubsub xmlns='\(NS.pubsubOwner)'><configure node='n'/></pubsub></iq>", "forbidden", nil, nil),
            ("<iq type='set' id='x' to='juliet@localhost'><pubsub xmlns='\(NS.pubsubOwner)'><delete node='n'/></pubsub></iq>", "forbidden", nil, nil),
            ("<iq type='get' id='x'><pubsub xmlns='\(NS.pubsub)'><items/></pubsub></iq>", "bad-request", "nodeid-required", nil),
            ("<iq type='set' id='x'><pubsub xmlns='\(NS.pubsub)'><publish node='n'><item/></publish></pubsub></iq>", "bad-request", "payload-required", nil),
            ("<iq type='set' id='x'><pubsub xmlns='\(NS.pubsub)'><publish node='n'/></pubsub></iq>", "bad-request", "item-required", nil),
            ("<iq type='set' id='x'><pubsub xmlns='\(NS.pubsub)'><publish node='n'><item><a xmlns='a'/><b xmlns='b'/></item></publish></pubsub></iq>", "bad-request", "invalid-payload", nil),
            ("<iq type='set' id='x'><pubsub xmlns='\(NS.pubsub)'><create/></pubsub></iq>", "not-acceptable", "nodeid-required", nil),
        ]
        for (xml, condition, pubsubCondition, feature) in cases {
            let reply = try #require(romeo.request(xml, id: "x"), "\(xml)")
            #expect(reply.errorCondition == condition, "\(xml)")
            if let pubsubCondition { #expect(reply.pubsubCondition == pubsubCondition, "\(xml)") }
            if let feature { #expect(reply.unsupportedFeature == feature, "\(xml)") }
        }
    }

    @Test func createMakesAnEmptyNodeOnce() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let create = "<iq type='set' id='c'><pubsub xmlns='\(NS.pubsub)'><create node='\(Self.tune)'/><configure/></pubsub></iq>"
        #expect(romeo.request(create, id: "c")?[attribute: "type"] == "result")
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == [])
        #expect(romeo.request(create, id: "c")?.errorCondition == "conflict")
        let configured = romeo.request(
            "<iq type='set' id='cc'><pubsub xmlns='\(NS.pubsub)'><create node='other'/><configure><x xmlns='jabber:x:data' type='submit'>"
                + "<field var='FORM_TYPE' type='hidden'><value>\(NS.pubsubNodeConfig)</value></field>"
                + "<field var='pubsub#access_model'><value>open</value></field></x></configure></pubsub></iq>",
            id: "cc")
        #expect(configured?[attribute: "type"] == "result", "created and configured at once")
        #expect(romeo.publish(Self.song, to: "other", options: ["pubsub#access_model": "open"])?[attribute: "type"] == "result")
    }

    @Test func aResourceWithNegativePriorityGetsNoNotifications() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        juliet.announce(TestCaps(notify: [Self.tune]))
        juliet.send("<presence><priority>-1</priority>\(TestCaps(notify: [Self.tune]).element)</presence>")
        _ = juliet.receive()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        #expect(Self.notifications(juliet.receiveElements()).isEmpty)
    }

    // MARK: - Notifications

    @Test func notificationsGoToInterestedResourcesOfTheOwnerAndContacts() throws {
        let (server, romeo, juliet, mercutio) = try romeoJulietAndAStranger()
        let chamber = server.connect()
        try chamber.login("romeo", "pw", resource: "chamber")
        let interested = TestCaps(notify: [Self.tune])
        chamber.announce(interested)
        juliet.announce(interested)
        mercutio.announce(interested)
        _ = romeo.receive()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t1")
        for client in [chamber, juliet] {
            let notification = try #require(Self.notifications(client.receiveElements()).first)
            #expect(notification[attribute: "from"] == "romeo@localhost")
            #expect(notification[attribute: "to"] == client.session.jid?.description)
            #expect(notification.pubsubItemIDs == ["t1"])
            let item = notification.child("event", namespace: NS.pubsubEvent)?.child("items", namespace: NS.pubsubEvent)?.child("item", namespace: NS.pubsubEvent)
            #expect(item?.child("tune", namespace: Self.tune)?.childText("title", namespace: Self.tune) == "Greensleeves")
        }
        #expect(Self.notifications(romeo.receiveElements()).isEmpty, "no caps, no +notify")
        #expect(Self.notifications(mercutio.receiveElements()).isEmpty, "not a contact")
        _ = romeo.publish("<geoloc xmlns='http://jabber.org/protocol/geoloc'/>", to: "http://jabber.org/protocol/geoloc")
        #expect(Self.notifications(juliet.receiveElements()).isEmpty, "not interested in geoloc")
    }

    @Test func retractAndDeleteNotifyWhenAsked() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        juliet.announce(TestCaps(notify: [Self.tune]))
        _ = romeo.publish(Self.song, to: Self.tune, id: "t", options: ["pubsub#max_items": "3"])
        _ = romeo.publish(Self.song, to: Self.tune, id: "u")
        _ = juliet.receive()
        _ = romeo.request("<iq type='set' id='r'><pubsub xmlns='\(NS.pubsub)'><retract node='\(Self.tune)'><item id='t'/></retract></pubsub></iq>", id: "r")
        #expect(Self.notifications(juliet.receiveElements()).count == 1, "pubsub#notify_retract is on by default")
        #expect(romeo.configure(Self.tune, ["pubsub#notify_retract": "0"])?[attribute: "type"] == "result")
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        _ = juliet.receiveElements()
        _ = romeo.request("<iq type='set' id='r'><pubsub xmlns='\(NS.pubsub)'><retract node='\(Self.tune)'><item id='t'/></retract></pubsub></iq>", id: "r")
        #expect(Self.notifications(juliet.receiveElements()).isEmpty, "neither the node nor the request asks")
        _ = romeo.request("<iq type='set' id='r'><pubsub xmlns='\(NS.pubsub)'><retract node='\(Self.tune)' notify='true'><item id='u'/></retract></pubsub></iq>", id: "r")
        let retracted = try #require(Self.notifications(juliet.receiveElements()).first)
        #expect(retracted.child("event", namespace: NS.pubsubEvent)?.child("items", namespace: NS.pubsubEvent)?.child("retract", namespace: NS.pubsubEvent)?[attribute: "id"] == "u")
        let delete = "<iq type='set' id='d'><pubsub xmlns='\(NS.pubsubOwner)'><delete node='\(Self.tune)'/></pubsub></iq>"
        #expect(romeo.request(delete, id: "d")?[attribute: "type"] == "result")
        let deleted = try #require(Self.notifications(juliet.receiveElements()).first)
        #expect(deleted.child("event", namespace: NS.pubsubEvent)?.child("delete", namespace: NS.pubsubEvent)?[attribute: "node"] == Self.tune)
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.errorCondition == "item-not-found")
        #expect(romeo.request(delete, id: "d")?.errorCondition == "item-not-found")
    }

    @Test func aResourceThatBecomesInterestedGetsTheLastItems() throws {
        let (server, romeo, _) = try romeoAndJulietAsContacts()
        _ = romeo.publish(Self.song, to: Self.tune, id: "old", options: ["pubsub#max_items": "2"])
        _ = romeo.publish(Self.song, to: Self.tune, id: "last")
        _ = romeo.publish("<mood xmlns='http://jabber.org/protocol/mood'><happy/></mood>", to: "http://jabber.org/protocol/mood", id: "m")
        let window = server.connect()
        try window.login("juliet", "pw", resource: "window")
        let received = window.announce(TestCaps(notify: [Self.tune]))
        let lastItems = Self.notifications(received)
        #expect(lastItems.count == 1, "the last item of the one node it wants")
        #expect(lastItems.first?.pubsubItemIDs == ["last"])
        #expect(lastItems.first?[attribute: "from"] == "romeo@localhost")
        // The same capabilities again: nothing new to send.
        window.send("<presence><show>away</show>\(TestCaps(notify: [Self.tune]).element)</presence>")
        #expect(Self.notifications(window.receiveElements()).isEmpty)
        // Wanting mood too: only mood's last item comes.
        let more = Self.notifications(window.announce(TestCaps(notify: [Self.tune, "http://jabber.org/protocol/mood"])))
        #expect(more.map(\.pubsubItemIDs) == [["m"]])
    }

    @Test func verifiedCapabilitiesAreCachedByVer() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        let caps = TestCaps(notify: [Self.tune])
        juliet.announce(caps)
        let window = server.connect()
        try window.login("juliet", "pw", resource: "window")
        window.send("<presence>\(caps.element)</presence>")
        #expect(!window.receiveElements().contains { $0.name == "iq" }, "a known ver needs no query")
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        #expect(Self.notifications(window.receiveElements()).map(\.pubsubItemIDs) == [["t"]])
    }

    @Test func unverifiableCapabilitiesServeOnlyTheResourceThatSentThem() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        let forged = TestCaps(notify: [Self.tune], claimed: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        juliet.announce(forged)
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        #expect(Self.notifications(juliet.receiveElements()).count == 1, "the answer serves the resource that gave it")
        let window = server.connect()
        try window.login("juliet", "pw", resource: "window")
        window.send("<presence>\(forged.element)</presence>")
        #expect(window.receiveElements().contains { $0.name == "iq" && $0.child("query", namespace: NS.discoInfo) != nil }, "not cached: asked again")
    }

    @Test func anAnswerFromAnotherResourceIsIgnored() throws {
        let (server, romeo, juliet) = try romeoAndJulietAsContacts()
        let caps = TestCaps(notify: [Self.tune])
        juliet.send("<presence>\(caps.element)</presence>")
        let query = try #require(juliet.receiveElements().first { $0.name == "iq" })
        let id = try #require(query[attribute: "id"])
        #expect(query[attribute: "from"] == "juliet@localhost", "the account's PEP service asks")
        #expect(id == "disco")
        #expect(query.child("query", namespace: NS.discoInfo)?[attribute: "node"] == "\(TestCaps.node)#\(caps.ver)")
        // Another resource answers in juliet's place.
        let window = server.connect()
        try window.login("juliet", "pw", resource: "window")
        window.send("<iq type='result' to='juliet@localhost' id='\(id)'>\(caps.info)</iq>")
        _ = romeo.publish(Self.song, to: Self.tune, id: "t")
        #expect(Self.notifications(juliet.receiveElements()).isEmpty)
    }

    // MARK: - XEP-0084

    @Test func anAvatarIsPublishedAndFetchedThroughPEP() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        juliet.announce(TestCaps(notify: [NS.avatarMetadata]))
        let image: [UInt8] = Array(repeating: 0x89, count: 300)
        let hash = Hex.encode(HashFunction.sha1.hash(image))
        let data = "<data xmlns='\(NS.avatarData)'>\(Base64.encode(image))</data>"
        #expect(romeo.publish(data, to: NS.avatarData, id: hash)?[attribute: "type"] == "result")
        #expect(Self.notifications(juliet.receiveElements()).isEmpty, "juliet wants metadata, not data")
        let metadata = "<metadata xmlns='\(NS.avatarMetadata)'><info id='\(hash)' bytes='300' type='image/png' width='1' height='1'/></metadata>"
        #expect(romeo.publish(metadata, to: NS.avatarMetadata, id: hash)?[attribute: "type"] == "result")
        let notification = try #require(Self.notifications(juliet.receiveElements()).first)
        let info = notification.child("event", namespace: NS.pubsubEvent)?.child("items", namespace: NS.pubsubEvent)?
            .child("item", namespace: NS.pubsubEvent)?.child("metadata", namespace: NS.avatarMetadata)?.child("info", namespace: NS.avatarMetadata)
        #expect(info?[attribute: "id"] == hash)
        let fetched = try #require(juliet.items(of: NS.avatarData, at: "romeo@localhost", children: "<item id='\(hash)'/>"))
        let text = fetched.child("pubsub", namespace: NS.pubsub)?.child("items", namespace: NS.pubsub)?.child("item", namespace: NS.pubsub)?
            .childText("data", namespace: NS.avatarData)
        #expect(try Base64.decode(try #require(text)) == image)
    }
}
