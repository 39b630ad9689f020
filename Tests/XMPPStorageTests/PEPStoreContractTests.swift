import Testing
import XMPPCore

@testable import XMPPStorage

/// What every `PEPStore` must do, checked against each implementation.
@Suite struct PEPStoreContractTests {
    static let node = "urn:xmpp:avatar:metadata"

    static func item(_ id: String) -> PEPItem {
        PEPItem(id: id, payload: "<metadata xmlns='urn:xmpp:avatar:metadata'><info id='\(id)'/></metadata>")
    }

    @Test(arguments: StoresKind.allCases)
    func nodesAreCreatedReconfiguredAndDeleted(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo", "juliet").pep
        #expect(try pep.configuration(of: Self.node, owner: "romeo") == nil)
        #expect(try pep.publish(Self.item("a"), to: Self.node, of: "romeo") == false, "no node, nothing stored")
        let open = PEPNodeConfiguration(accessModel: .open, maxItems: 5, persistItems: true)
        try pep.setNode(Self.node, of: "romeo", configuration: open)
        #expect(try pep.configuration(of: Self.node, owner: "romeo") == open)
        #expect(try pep.configuration(of: Self.node, owner: "juliet") == nil, "each account has its own nodes")
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration())
        #expect(try pep.configuration(of: Self.node, owner: "romeo") == PEPNodeConfiguration())
        #expect(try pep.deleteNode(Self.node, of: "romeo"))
        #expect(try pep.deleteNode(Self.node, of: "romeo") == false)
        #expect(try pep.configuration(of: Self.node, owner: "romeo") == nil)
    }

    @Test(arguments: StoresKind.allCases)
    func itemsComeNewestFirstAndARepublishedIDMovesToTheFront(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration(maxItems: 10))
        for id in ["a", "b", "c"] { #expect(try pep.publish(Self.item(id), to: Self.node, of: "romeo")) }
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: nil).map(\.id) == ["c", "b", "a"])
        let replaced = PEPItem(id: "a", payload: "<x xmlns='y'/>")
        #expect(try pep.publish(replaced, to: Self.node, of: "romeo"))
        let items = try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: nil)
        #expect(items.map(\.id) == ["a", "c", "b"])
        #expect(items.first == replaced)
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: 2).map(\.id) == ["a", "c"])
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: ["b", "zz", "c"], limit: nil).map(\.id) == ["c", "b"])
        #expect(try pep.items(of: "other", owner: "romeo", ids: nil, limit: nil).isEmpty)
    }

    @Test(arguments: StoresKind.allCases)
    func aNodeKeepsAtMostMaxItemsAndNoneWithoutPersistence(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration(maxItems: 2))
        for id in ["a", "b", "c"] { _ = try pep.publish(Self.item(id), to: Self.node, of: "romeo") }
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: nil).map(\.id) == ["c", "b"])
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration(maxItems: 1))
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: nil).map(\.id) == ["c"], "lowering trims")
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration(maxItems: 1, persistItems: false))
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: nil).isEmpty)
        #expect(try pep.publish(Self.item("d"), to: Self.node, of: "romeo"), "published, though not kept")
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: nil).isEmpty)
    }

    @Test(arguments: StoresKind.allCases)
    func retractRemovesOneItem(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration(maxItems: 5))
        for id in ["a", "b"] { _ = try pep.publish(Self.item(id), to: Self.node, of: "romeo") }
        #expect(try pep.retract("a", from: Self.node, of: "romeo"))
        #expect(try pep.retract("a", from: Self.node, of: "romeo") == false)
        #expect(try pep.retract("b", from: "other", of: "romeo") == false)
        #expect(try pep.items(of: Self.node, owner: "romeo", ids: nil, limit: nil).map(\.id) == ["b"])
    }

    @Test(arguments: StoresKind.allCases)
    func lastItemsAreTheNewestOfEachNodeWithItems(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        let open = PEPNodeConfiguration(accessModel: .open, maxItems: 3)
        try pep.setNode("b-node", of: "romeo", configuration: open)
        try pep.setNode("a-node", of: "romeo", configuration: PEPNodeConfiguration())
        try pep.setNode("empty", of: "romeo", configuration: PEPNodeConfiguration())
        for id in ["1", "2"] { _ = try pep.publish(Self.item(id), to: "b-node", of: "romeo") }
        _ = try pep.publish(Self.item("3"), to: "a-node", of: "romeo")
        #expect(
            try pep.lastItems(of: "romeo", nodes: nil) == [
                PEPLastItem(node: "a-node", configuration: PEPNodeConfiguration(), item: Self.item("3")),
                PEPLastItem(node: "b-node", configuration: open, item: Self.item("2")),
            ])
        #expect(try pep.lastItems(of: "nobody", nodes: nil).isEmpty)
        #expect(try pep.lastItems(of: "romeo", nodes: ["b-node", "empty", "none"]).map(\.node) == ["b-node"], "only the nodes named")
        #expect(try pep.lastItems(of: "romeo", nodes: []).isEmpty)
    }

    @Test(arguments: StoresKind.allCases)
    func itemIDsAndStoredBytesCoverEveryNodeOfTheAccount(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo", "juliet").pep
        for user in ["romeo", "juliet"] {
            try pep.setNode("a", of: user, configuration: PEPNodeConfiguration(maxItems: 5))
        }
        try pep.setNode("b", of: "romeo", configuration: PEPNodeConfiguration())
        let accented = PEPItem(id: "3", payload: "<x xmlns='urn:x'>\u{E9}</x>")
        for id in ["1", "2"] { _ = try pep.publish(Self.item(id), to: "a", of: "romeo") }
        _ = try pep.publish(accented, to: "b", of: "romeo")
        _ = try pep.publish(Self.item("9"), to: "a", of: "juliet")
        #expect(try pep.itemIDs(of: "a", owner: "romeo") == ["2", "1"])
        #expect(try pep.itemIDs(of: "none", owner: "romeo").isEmpty)
        let expected = Self.item("1").payload.utf8.count + Self.item("2").payload.utf8.count + accented.payload.utf8.count
        #expect(try pep.storedBytes(of: "romeo") == expected, "UTF-8 bytes, the account's own nodes")
        #expect(try pep.storedBytes(of: "nobody") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func subscriptionCountCountsOthersNodesAndEachResource(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo", "juliet", "mercutio").pep
        for owner in ["romeo", "juliet", "mercutio"] {
            try pep.setNode(Self.node, of: owner, configuration: PEPNodeConfiguration(accessModel: .open))
        }
        _ = try pep.subscribe(PEPSubscriber(username: "mercutio"), to: Self.node, of: "romeo")
        _ = try pep.subscribe(PEPSubscriber(username: "mercutio", resource: "street"), to: Self.node, of: "romeo")
        _ = try pep.subscribe(PEPSubscriber(username: "mercutio"), to: Self.node, of: "juliet")
        _ = try pep.subscribe(PEPSubscriber(username: "mercutio"), to: Self.node, of: "mercutio")
        _ = try pep.subscribe(PEPSubscriber(username: "juliet"), to: Self.node, of: "romeo")
        #expect(try pep.subscriptionCount(of: "mercutio") == 3, "not to its own node")
        #expect(try pep.subscriptionCount(of: "juliet") == 1)
        #expect(try pep.subscriptionCount(of: "nobody") == 0)
    }

    @Test(arguments: StoresKind.allCases)
    func namesAndIDsCompareByteForByte(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        // "é" precomposed and decomposed: equal as Swift strings, not as bytes.
        try pep.setNode("caf\u{E9}", of: "romeo", configuration: PEPNodeConfiguration(maxItems: 5))
        #expect(try pep.configuration(of: "cafe\u{301}", owner: "romeo") == nil)
        _ = try pep.publish(Self.item("\u{E9}"), to: "caf\u{E9}", of: "romeo")
        _ = try pep.publish(Self.item("e\u{301}"), to: "caf\u{E9}", of: "romeo")
        #expect(try pep.items(of: "caf\u{E9}", owner: "romeo", ids: nil, limit: nil).count == 2)
    }

    @Test(arguments: StoresKind.allCases)
    func anUnknownAccountHasNoNodesAndGetsNone(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        #expect(throws: UnknownAccountError(username: "Romeo"), "usernames arrive prepared") {
            try pep.setNode(Self.node, of: "Romeo", configuration: PEPNodeConfiguration())
        }
        #expect(try pep.deleteNode(Self.node, of: "nobody") == false)
        #expect(try pep.items(of: Self.node, owner: "nobody", ids: nil, limit: nil).isEmpty)
    }

    @Test(arguments: StoresKind.allCases)
    func deletingTheAccountDeletesItsNodesAndItems(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "juliet")
        for user in ["romeo", "juliet"] {
            try stores.pep.setNode(Self.node, of: user, configuration: PEPNodeConfiguration())
            _ = try stores.pep.publish(Self.item(user), to: Self.node, of: user)
        }
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try stores.pep.configuration(of: Self.node, owner: "romeo") == nil, "a new account starts without nodes")
        #expect(try stores.pep.lastItems(of: "romeo", nodes: nil).isEmpty)
        #expect(try stores.pep.items(of: Self.node, owner: "juliet", ids: nil, limit: nil) == [Self.item("juliet")])
        if let database = stores.database {
            #expect(try database.withCachedStatement("SELECT count(*) FROM pep_items") { statement in
                _ = try statement.step()
                return statement.int(at: 0)
            } == 1, "the cascade reached the items")
        }
    }

    @Test(arguments: StoresKind.allCases)
    func everyConfigurationFieldAndThePublicationTimeAreKept(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        let bookmarks = PEPNodeConfiguration(
            accessModel: .whitelist, maxItems: 255, persistItems: true, lastItemDelivery: .never,
            notifyRetract: false, deliverPayloads: false, itemReply: .publisher, title: "Rooms")
        try pep.setNode("urn:xmpp:bookmarks:1", of: "romeo", configuration: bookmarks)
        #expect(try pep.configuration(of: "urn:xmpp:bookmarks:1", owner: "romeo") == bookmarks)
        let item = PEPItem(id: "room@muc", payload: "<conference xmlns='urn:xmpp:bookmarks:1'/>", published: 1_700_000_000_123)
        _ = try pep.publish(item, to: "urn:xmpp:bookmarks:1", of: "romeo")
        #expect(try pep.items(of: "urn:xmpp:bookmarks:1", owner: "romeo", ids: nil, limit: nil) == [item])
        #expect(try pep.lastItems(of: "romeo", nodes: nil) == [PEPLastItem(node: "urn:xmpp:bookmarks:1", configuration: bookmarks, item: item)])
        let onSubscription = PEPNodeConfiguration(lastItemDelivery: .onSubscription, itemReply: .owner)
        try pep.setNode("urn:xmpp:bookmarks:1", of: "romeo", configuration: onSubscription)
        #expect(try pep.configuration(of: "urn:xmpp:bookmarks:1", owner: "romeo") == onSubscription)
    }

    @Test(arguments: StoresKind.allCases)
    func purgeEmptiesOneNodeAndKeepsIt(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo").pep
        for node in ["a", "b"] {
            try pep.setNode(node, of: "romeo", configuration: PEPNodeConfiguration(maxItems: 5))
            for id in ["1", "2"] { _ = try pep.publish(Self.item(id), to: node, of: "romeo") }
        }
        #expect(try pep.purge("a", of: "romeo"))
        #expect(try pep.items(of: "a", owner: "romeo", ids: nil, limit: nil).isEmpty)
        #expect(try pep.configuration(of: "a", owner: "romeo") != nil, "the node stays")
        #expect(try pep.items(of: "b", owner: "romeo", ids: nil, limit: nil).map(\.id) == ["2", "1"])
        #expect(try pep.purge("none", of: "romeo") == false)
        #expect(try pep.purge("a", of: "nobody") == false)
    }

    @Test(arguments: StoresKind.allCases)
    func nodesAreListedByNameWithTheirConfigurations(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo", "juliet").pep
        let titled = PEPNodeConfiguration(accessModel: .open, title: "Tunes")
        try pep.setNode("b", of: "romeo", configuration: titled)
        try pep.setNode("a", of: "romeo", configuration: PEPNodeConfiguration())
        try pep.setNode("c", of: "juliet", configuration: PEPNodeConfiguration())
        #expect(
            try pep.nodes(of: "romeo") == [
                PEPNode(name: "a", configuration: PEPNodeConfiguration()), PEPNode(name: "b", configuration: titled),
            ])
        #expect(try pep.nodes(of: "nobody").isEmpty)
    }

    @Test(arguments: StoresKind.allCases)
    func subscriptionsAreKeptInOrderUntilEndedOrTheNodeGoes(kind: StoresKind) throws {
        let pep = try kind.makeStores(withAccounts: "romeo", "mercutio", "juliet").pep
        let mercutio = PEPSubscriber(username: "mercutio"), balcony = PEPSubscriber(username: "juliet", resource: "balcony")
        #expect(try pep.subscribe(mercutio, to: Self.node, of: "romeo") == false, "no node")
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration(accessModel: .open))
        for subscriber in [mercutio, balcony, mercutio] {
            #expect(try pep.subscribe(subscriber, to: Self.node, of: "romeo"))
        }
        #expect(throws: UnknownAccountError(username: "nobody")) {
            try pep.subscribe(PEPSubscriber(username: "nobody"), to: Self.node, of: "romeo")
        }
        #expect(try pep.subscribers(of: Self.node, owner: "romeo") == [mercutio, balcony])
        #expect(try pep.unsubscribe(PEPSubscriber(username: "juliet"), from: Self.node, of: "romeo") == false, "the balcony's only")
        #expect(try pep.unsubscribe(mercutio, from: Self.node, of: "romeo"))
        #expect(try pep.unsubscribe(mercutio, from: Self.node, of: "romeo") == false)
        #expect(try pep.subscribers(of: Self.node, owner: "romeo") == [balcony])
        #expect(try pep.deleteNode(Self.node, of: "romeo"))
        try pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration())
        #expect(try pep.subscribers(of: Self.node, owner: "romeo").isEmpty, "deleting the node ended them")
    }

    @Test(arguments: StoresKind.allCases)
    func aDeletedAccountsSubscriptionsGoWithIt(kind: StoresKind) throws {
        let stores = try kind.makeStores(withAccounts: "romeo", "mercutio", "juliet")
        try stores.pep.setNode(Self.node, of: "romeo", configuration: PEPNodeConfiguration(accessModel: .open))
        let juliet = PEPSubscriber(username: "juliet")
        for subscriber in [PEPSubscriber(username: "mercutio", resource: "street"), juliet] {
            _ = try stores.pep.subscribe(subscriber, to: Self.node, of: "romeo")
        }
        #expect(try stores.accounts.deleteAccount("mercutio"))
        #expect(try stores.accounts.createAccount("mercutio", credentials: sampleCredentialPair()))
        #expect(try stores.pep.subscribers(of: Self.node, owner: "romeo") == [juliet], "a new account inherits nothing")
    }
}
