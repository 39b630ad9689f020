import Testing
import XMPPCore
import XMPPStorage
import XMPPTestSupport

@testable import XMPPServer

/// XEP-0402 §3 `#compat`: XEP-0048 bookmarks in private storage and
/// XEP-0402 bookmarks in PEP are one set (`BookmarksConversion`).
@Suite struct BookmarksConversionTests {
    static let legacy = """
        <storage xmlns='storage:bookmarks'>\
        <conference jid='theplay@conference.shakespeare.lit' autojoin='1' name='The Play&apos;s the Thing'>\
        <nick>JC</nick><password>secret</password><state xmlns='urn:test:client'/></conference>\
        <conference jid='orchard@conference.shakespeare.lit' name='The Orchard'/>\
        <url name='Prosody' url='https://prosody.im/'/>\
        </storage>
        """

    static let theplay = """
        <conference xmlns='urn:xmpp:bookmarks:1' name='The Play&apos;s the Thing' autojoin='true'>\
        <nick>JC</nick><password>secret</password><extensions><state xmlns='urn:test:client'/></extensions></conference>
        """

    static let orchard = "<conference xmlns='urn:xmpp:bookmarks:1' name='The Orchard'/>"

    /// Publishes XEP-0402 bookmarks the way clients do, on a node that
    /// keeps them all.
    static func publishBookmark(_ payload: String, id: String, by client: TestClient) {
        let reply = client.publish(payload, to: NS.bookmarks, id: id, options: ["pubsub#max_items": "max"])
        #expect(reply?[attribute: "type"] == "result")
    }

    // MARK: - The conversion itself

    @Test func legacyConferencesBecomeXEP0402Items() {
        let items = BookmarksConversion.conferences(in: parsedElement(Self.legacy))
        #expect(items.map(\.id) == ["theplay@conference.shakespeare.lit", "orchard@conference.shakespeare.lit"])
        #expect(items.first?.payload == parsedElement(Self.theplay))
        #expect(items.last?.payload == parsedElement(Self.orchard))
    }

    @Test func conferencesWithoutAValidBareJIDAreSkippedAndTheLastOfARoomWins() {
        let storage = parsedElement(
            """
            <storage xmlns='storage:bookmarks'><conference name='no jid'/><conference jid='@@'/>\
            <conference jid='room@muc.localhost/nick'/><conference jid='Room@MUC.localhost' name='first'/>\
            <conference jid='room@muc.localhost' name='second'/></storage>
            """)
        let items = BookmarksConversion.conferences(in: storage)
        #expect(items.map(\.id) == ["room@muc.localhost"])
        #expect(items.first?.payload[attribute: "name"] == "second")
    }

    @Test func xep0402ItemsBecomeALegacyStorage() {
        let storage = BookmarksConversion.legacyStorage([
            ("theplay@conference.shakespeare.lit", parsedElement(Self.theplay)),
            ("orchard@conference.shakespeare.lit", parsedElement(Self.orchard)),
        ])
        let expected = parsedElement(
            """
            <storage xmlns='storage:bookmarks'>\
            <conference jid='theplay@conference.shakespeare.lit' name='The Play&apos;s the Thing' autojoin='true'>\
            <nick>JC</nick><password>secret</password><state xmlns='urn:test:client'/></conference>\
            <conference jid='orchard@conference.shakespeare.lit' name='The Orchard' autojoin='false'/>\
            </storage>
            """)
        #expect(storage == expected)
    }

    // MARK: - Through the server, PEP's part recorded

    @Test func aLegacySetAsksPEPToPublishEachConference() throws {
        let recorder = PEPRequestRecorder()
        let (server, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        let reply = romeo.privateStorage("set", Self.legacy)
        #expect(reply?[attribute: "type"] == "result")
        let maxItems = server.context.config.limits.pepMaxItems
        let configuration = PEPNodeConfiguration(
            accessModel: .whitelist, maxItems: maxItems, persistItems: true, lastItemDelivery: .never)
        #expect(
            recorder.take() == [
                .publish(node: NS.bookmarks, item: Self.item("theplay@conference.shakespeare.lit", Self.theplay), configuration: configuration, enforced: true),
                .publish(node: NS.bookmarks, item: Self.item("orchard@conference.shakespeare.lit", Self.orchard), configuration: configuration, enforced: true),
            ])
        #expect(
            romeo.privateStorage("get", "<exodus xmlns='exodus:prefs'/>")?.privateElement
                == parsedElement("<exodus xmlns='exodus:prefs'/>"), "bookmarks are not kept as private XML")
    }

    @Test func aLegacySetPublishesOnlyWhatChangedAndRetractsWhatWentAway() throws {
        let recorder = PEPRequestRecorder()
        let (_, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        Self.publishBookmark(Self.theplay, id: "theplay@conference.shakespeare.lit", by: romeo)
        Self.publishBookmark(Self.orchard, id: "orchard@conference.shakespeare.lit", by: romeo)
        Self.publishBookmark("<conference xmlns='urn:xmpp:bookmarks:1'/>", id: "gone@conference.shakespeare.lit", by: romeo)
        _ = romeo.receive()
        let changed = Self.legacy.replacingOccurrences(of: "name='The Orchard'", with: "name='The Orchard' autojoin='true'")
        #expect(romeo.privateStorage("set", changed)?[attribute: "type"] == "result")
        let requests = recorder.take()
        #expect(requests.count == 2)
        guard case .publish(let node, let item, _, _)? = requests.first else {
            Issue.record("no publish: \(requests)")
            return
        }
        #expect(node == NS.bookmarks)
        #expect(item[attribute: "id"] == "orchard@conference.shakespeare.lit", "theplay is unchanged")
        #expect(item.elements.first?[attribute: "autojoin"] == "true")
        #expect(requests.last == .retract(node: NS.bookmarks, id: "gone@conference.shakespeare.lit"))
    }

    @Test func tooManyBookmarksAreAResourceConstraint() throws {
        var config = ServerConfig()
        config.limits.pepMaxItems = 1
        let recorder = PEPRequestRecorder()
        let (_, romeo, _) = try romeoAndJuliet(config: config, extraFeatures: [recorder])
        #expect(romeo.privateStorage("set", Self.legacy)?.errorCondition == "resource-constraint")
        #expect(recorder.take().isEmpty)
    }

    // MARK: - XEP-0048 in PEP (#compat-pep), PEP's events fired by hand

    /// Fires what PEP fires once `client`'s user published `payload` as
    /// item `id` of `node`.
    static func published(_ payload: String, id: String, to node: String, by client: TestClient, on server: TestServer, onBehalf: Bool = false) {
        let item = Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(parsedElement(payload))])
        let session = client.session
        server.context.hooks.fire(
            PEPItemPublished(owner: session.jid!.bare, node: node, item: item, onBehalf: onBehalf, session: session))
        server.loop.run()
    }

    @Test func xep0048BookmarksPublishedInPEPBecomeTheXEP0402Set() throws {
        let recorder = PEPRequestRecorder()
        let (server, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        Self.published(Self.legacy, id: "current", to: NS.bookmarksLegacy, by: romeo, on: server, onBehalf: true)
        #expect(recorder.take().isEmpty, "PEP published it for the server")
        Self.published(Self.legacy, id: "current", to: NS.bookmarksLegacy, by: romeo, on: server)
        let requests = recorder.take()
        #expect(requests.count == 2, "the two conferences, and nothing back to storage:bookmarks")
        #expect(requests.allSatisfy { if case .publish(NS.bookmarks, _, _, _) = $0 { true } else { false } })
    }

    @Test func theLegacyPEPNodeFollowsTheSetOnlyForUsersWhoHaveIt() throws {
        let recorder = PEPRequestRecorder()
        let (server, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        Self.publishBookmark(Self.orchard, id: "orchard@conference.shakespeare.lit", by: romeo)
        Self.published(Self.orchard, id: "orchard@conference.shakespeare.lit", to: NS.bookmarks, by: romeo, on: server)
        #expect(recorder.take().isEmpty, "no storage:bookmarks node to keep up to date")
        let storage = BookmarksConversion.legacyStorage([("orchard@conference.shakespeare.lit", parsedElement(Self.orchard))])
        #expect(romeo.publish(storage.xml, to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        _ = romeo.receive()
        #expect(recorder.take().isEmpty, "the same set as the XEP-0402 node holds: nothing to convert")
        Self.published(Self.orchard, id: "orchard@conference.shakespeare.lit", to: NS.bookmarks, by: romeo, on: server)
        let expected = Element("item", namespace: NS.pubsub, attributes: ["id": "current"], children: [.element(storage)])
        let requests = recorder.take()
        #expect(requests.count == 1)
        guard case .publish(let node, let item, _, _)? = requests.first else { return }
        #expect(node == NS.bookmarksLegacy)
        #expect(item == expected)
    }

    @Test func aLegacyPrivateSetAlsoUpdatesTheLegacyPEPNode() throws {
        let recorder = PEPRequestRecorder()
        let (_, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        #expect(romeo.publish("<storage xmlns='storage:bookmarks'/>", to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        #expect(romeo.privateStorage("set", Self.legacy)?[attribute: "type"] == "result")
        let requests = recorder.take()
        #expect(requests.count == 3)
        guard case .publish(let node, let item, _, _)? = requests.last else { return }
        #expect(node == NS.bookmarksLegacy)
        #expect(item.elements.first == BookmarksConversion.legacyStorage(BookmarksConversion.conferences(in: parsedElement(Self.legacy))))
    }

    @Test func everyBookmarksPublishAsksForAWhitelistNodeAndEnforcesIt() throws {
        let recorder = PEPRequestRecorder()
        let (server, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        // A client created storage:bookmarks with the default (presence) access model.
        #expect(romeo.publish("<storage xmlns='storage:bookmarks'/>", to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        #expect(romeo.privateStorage("set", Self.legacy)?[attribute: "type"] == "result")
        Self.published(Self.orchard, id: "orchard@conference.shakespeare.lit", to: NS.bookmarks, by: romeo, on: server)
        let only = "<storage xmlns='storage:bookmarks'><conference jid='new@conference.shakespeare.lit'/></storage>"
        Self.published(only, id: "current", to: NS.bookmarksLegacy, by: romeo, on: server)
        let publishes = recorder.take().compactMap { request -> (String, PEPNodeConfiguration, Bool)? in
            guard case .publish(let node, _, let configuration, let enforced) = request else { return nil }
            return (node, configuration, enforced)
        }
        #expect(publishes.map(\.0) == [NS.bookmarks, NS.bookmarks, NS.bookmarksLegacy, NS.bookmarksLegacy, NS.bookmarks])
        for (node, configuration, enforced) in publishes {
            #expect(configuration.accessModel == .whitelist, "\(node)")
            #expect(enforced, "\(node) is made whitelist even if a client created it otherwise")
        }
    }

    @Test func aSetTooBigForTheLegacyPEPNodeIsNotMirroredAndSaysSo() throws {
        let storage = BookmarksConversion.legacyStorage(BookmarksConversion.conferences(in: parsedElement(Self.legacy)))
        var config = ServerConfig()
        config.limits.pepMaxItemSize = try #require(StoredStanza.serialize(storage)).utf8.count - 1
        let recorder = PEPRequestRecorder()
        let (server, romeo, _) = try romeoAndJuliet(config: config, extraFeatures: [recorder])
        #expect(romeo.publish("<storage xmlns='storage:bookmarks'/>", to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        #expect(romeo.privateStorage("set", Self.legacy)?[attribute: "type"] == "result")
        let requests = recorder.take()
        #expect(requests.count == 2, "the two conferences, to urn:xmpp:bookmarks:1 only: \(requests)")
        #expect(requests.allSatisfy { if case .publish(NS.bookmarks, _, _, _) = $0 { true } else { false } })
        #expect(server.logLines.lines.contains { $0.hasPrefix("notice") && $0.contains("pep_max_item_size") })
        Self.published(Self.orchard, id: "orchard@conference.shakespeare.lit", to: NS.bookmarks, by: romeo, on: server)
        #expect(recorder.take().isEmpty, "the set PEP now holds is as big")
    }

    @Test func theChangesAreWorkedOutInTheStorageJob() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        #expect(romeo.publish("<storage xmlns='storage:bookmarks'/>", to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        Self.publishBookmark(Self.theplay, id: "theplay@conference.shakespeare.lit", by: romeo)
        Self.publishBookmark("<conference xmlns='urn:xmpp:bookmarks:1'/>", id: "gone@conference.shakespeare.lit", by: romeo)
        _ = romeo.receive()
        let wanted = BookmarksConversion.conferences(in: parsedElement(Self.legacy))
        var outcome: Result<BookmarksConversion.Changes, any Error>?
        server.context.storage.run(on: server.loop, { stores in
            try BookmarksConversion.Changes(of: "romeo", toHold: wanted, mirroring: true, maxItemSize: .max, in: stores)
        }) { outcome = $0 }
        server.loop.run()
        let changes = try #require(try outcome?.get())
        #expect(changes.publish.map(\.id) == ["orchard@conference.shakespeare.lit"], "theplay is unchanged")
        #expect(changes.retract == ["gone@conference.shakespeare.lit"])
        guard case .publish(let storage)? = changes.legacyNode else {
            Issue.record("storage:bookmarks is not mirrored")
            return
        }
        #expect(storage == BookmarksConversion.legacyStorage(wanted))
    }

    // MARK: - PEP emptied a node: one PEPItemRetracted per item, fired by hand

    @Test(arguments: ["purge", "delete"])
    func emptyingTheXEP0402NodeEmptiesTheLegacyOne(operation: String) throws {
        let recorder = PEPRequestRecorder()
        let (server, romeo, _) = try romeoAndJuliet(extraFeatures: [recorder])
        Self.publishBookmark(Self.theplay, id: "theplay@conference.shakespeare.lit", by: romeo)
        Self.publishBookmark(Self.orchard, id: "orchard@conference.shakespeare.lit", by: romeo)
        let storage = BookmarksConversion.legacyStorage(BookmarksConversion.conferences(in: parsedElement(Self.legacy)))
        #expect(romeo.publish(storage.xml, to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        let reply = romeo.request(
            "<iq type='set' id='empty'><pubsub xmlns='\(NS.pubsubOwner)'><\(operation) node='\(NS.bookmarks)'/></pubsub></iq>",
            id: "empty")
        #expect(reply?[attribute: "type"] == "result")
        _ = romeo.receive()
        _ = recorder.take()
        let session = romeo.session
        for id in ["theplay@conference.shakespeare.lit", "orchard@conference.shakespeare.lit"] {
            server.context.hooks.fire(
                PEPItemRetracted(owner: session.jid!.bare, node: NS.bookmarks, itemID: id, onBehalf: false, session: session))
        }
        server.loop.run()
        _ = romeo.receive()
        let empty = Element("storage", namespace: NS.bookmarksLegacy)
        let requests = recorder.take()
        #expect(requests.count == 2)
        for request in requests {
            guard case .publish(let node, let item, _, _) = request else {
                Issue.record("not a publish: \(request)")
                continue
            }
            #expect(node == NS.bookmarksLegacy)
            #expect(item.elements.first == empty)
        }
        let legacy = romeo.items(of: NS.bookmarksLegacy, at: "romeo@localhost")?.child("pubsub", namespace: NS.pubsub)?
            .child("items", namespace: NS.pubsub)?.elements.first?.elements.first
        #expect(legacy == empty)
        #expect(romeo.privateStorage("get", "<storage xmlns='storage:bookmarks'/>")?.privateElement == empty)
    }

    // MARK: - Through the server, PEP's part real

    @Test func aLegacyGetReadsTheXEP0402Node() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let empty = romeo.privateStorage("get", "<storage xmlns='storage:bookmarks'/>")
        #expect(empty?.privateElement == parsedElement("<storage xmlns='storage:bookmarks'/>"))
        Self.publishBookmark(Self.theplay, id: "theplay@conference.shakespeare.lit", by: romeo)
        Self.publishBookmark(Self.orchard, id: "orchard@conference.shakespeare.lit", by: romeo)
        _ = romeo.receive()
        let storage = romeo.privateStorage("get", "<storage xmlns='storage:bookmarks'/>")?.privateElement
        let conferences = storage?.elements ?? []
        #expect(conferences.map { $0[attribute: "jid"] } == ["theplay@conference.shakespeare.lit", "orchard@conference.shakespeare.lit"])
        #expect(conferences.first?.childText("password") == "secret")
        #expect(conferences.first?[attribute: "autojoin"] == "true")
        #expect(conferences.first?.child("state", namespace: "urn:test:client") != nil)
        _ = romeo.request(
            "<iq type='set' id='retract'><pubsub xmlns='\(NS.pubsub)'><retract node='\(NS.bookmarks)'>"
                + "<item id='theplay@conference.shakespeare.lit'/></retract></pubsub></iq>", id: "retract")
        let after = romeo.privateStorage("get", "<storage xmlns='storage:bookmarks'/>")?.privateElement
        #expect(after?.elements.map { $0[attribute: "jid"] } == ["orchard@conference.shakespeare.lit"])
    }

    /// Needs PEP to carry out `PEPPublishRequest` and `PEPRetractRequest`.
    @Test
    func aLegacySetIsReadThroughXEP0402() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        #expect(romeo.privateStorage("set", Self.legacy)?[attribute: "type"] == "result")
        _ = romeo.receive()
        let items = romeo.items(of: NS.bookmarks, at: "romeo@localhost")
        #expect(Set(items?.pubsubItemIDs ?? []) == ["theplay@conference.shakespeare.lit", "orchard@conference.shakespeare.lit"])
        let theplay = items?.child("pubsub", namespace: NS.pubsub)?.child("items", namespace: NS.pubsub)?.elements
            .first { $0[attribute: "id"] == "theplay@conference.shakespeare.lit" }
        #expect(theplay?.elements.first == parsedElement(Self.theplay))
        let only = "<storage xmlns='storage:bookmarks'><conference jid='orchard@conference.shakespeare.lit' name='The Orchard'/></storage>"
        #expect(romeo.privateStorage("set", only)?[attribute: "type"] == "result")
        _ = romeo.receive()
        #expect(romeo.items(of: NS.bookmarks, at: "romeo@localhost")?.pubsubItemIDs == ["orchard@conference.shakespeare.lit"])
        let storage = romeo.privateStorage("get", "<storage xmlns='storage:bookmarks'/>")?.privateElement
        #expect(storage?.elements.map { $0[attribute: "jid"] } == ["orchard@conference.shakespeare.lit"])
    }

    /// Needs PEP to carry out `PEPPublishRequest` with its configuration.
    @Test
    func legacyBookmarksAreNotReadableByContacts() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        #expect(romeo.privateStorage("set", Self.legacy)?[attribute: "type"] == "result")
        _ = romeo.receive()
        _ = juliet.receive()
        let items = juliet.items(of: NS.bookmarks, at: "romeo@localhost")
        #expect(items?[attribute: "type"] == "error", "the node's access model is whitelist")
    }

    /// A client that made `storage:bookmarks` itself, with the default
    /// `presence` access, does not get room passwords mirrored to its
    /// contacts: the node is made whitelist first.
    @Test func aLegacyNodeAClientMadeReadableBecomesPrivateBeforeItHoldsPasswords() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        #expect(romeo.publish("<storage xmlns='storage:bookmarks'/>", to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        _ = romeo.receive()
        #expect(juliet.items(of: NS.bookmarksLegacy, at: "romeo@localhost")?[attribute: "type"] == "result", "readable so far")
        _ = juliet.receive()
        Self.publishBookmark(Self.theplay, id: "theplay@conference.shakespeare.lit", by: romeo)
        _ = romeo.receive()
        let items = juliet.items(of: NS.bookmarksLegacy, at: "romeo@localhost")
        #expect(items?[attribute: "type"] == "error", "\(items?.xml ?? "")")
        #expect(items.map { !$0.xml.contains("secret") } ?? true)
    }

    /// Needs PEP to fire `PEPItemPublished` and carry out `PEPPublishRequest`.
    @Test
    func xep0048BookmarksInPEPAreReadThroughXEP0402AndBack() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        #expect(romeo.publish(Self.legacy, to: NS.bookmarksLegacy, id: "current")?[attribute: "type"] == "result")
        _ = romeo.receive()
        let items = romeo.items(of: NS.bookmarks, at: "romeo@localhost")
        #expect(Set(items?.pubsubItemIDs ?? []) == ["theplay@conference.shakespeare.lit", "orchard@conference.shakespeare.lit"])
        _ = romeo.request(
            "<iq type='set' id='retract'><pubsub xmlns='\(NS.pubsub)'><retract node='\(NS.bookmarks)'>"
                + "<item id='theplay@conference.shakespeare.lit'/></retract></pubsub></iq>", id: "retract")
        _ = romeo.receive()
        let legacy = romeo.items(of: NS.bookmarksLegacy, at: "romeo@localhost")?.child("pubsub", namespace: NS.pubsub)?
            .child("items", namespace: NS.pubsub)?.elements.first?.elements.first
        #expect(legacy?.elements.map { $0[attribute: "jid"] } == ["orchard@conference.shakespeare.lit"])
    }

    static func item(_ id: String, _ payload: String) -> Element {
        Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(parsedElement(payload))])
    }
}
