import Testing
import XMPPCore
import XMPPStorage
@testable import XMPPServer
import XMPPTestSupport

/// What bounds one account's PEP data: the length of node names, item ids
/// and titles (`pep_max_name_size`), the bytes of its items (`pep_quota`),
/// the items one `<items/>` answers and a node keeps once `pep_max_items`
/// is lowered, and its subscriptions to others' nodes
/// (`pep_max_subscriptions`, XEP-0060 §6.1.3.7).
@Suite struct PEPBoundsTests {
    static let tune = PEPNodeConfigurationTests.tune
    static let song = PEPNodeConfigurationTests.song

    private static func subscribe(_ node: String, jid: String, at owner: String = "romeo@localhost") -> String {
        "<iq type='set' id='sub' to='\(owner)'><pubsub xmlns='\(NS.pubsub)'><subscribe node='\(node)' jid='\(jid)'/></pubsub></iq>"
    }

    @Test func longNamesIDsAndTitlesAreNotAcceptable() throws {
        var config = ServerConfig()
        config.limits.pepMaxNameSize = 64
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        let long = String(repeating: "n", count: 65)
        #expect(romeo.publish(Self.song, to: long, id: "a")?.errorCondition == "not-acceptable")
        #expect(romeo.publish(Self.song, to: Self.tune, id: long)?.errorCondition == "not-acceptable")
        let create = "<iq type='set' id='c'><pubsub xmlns='\(NS.pubsub)'><create node='\(long)'/></pubsub></iq>"
        #expect(romeo.request(create, id: "c")?.errorCondition == "not-acceptable")
        #expect(romeo.publish(Self.song, to: Self.tune, id: String(repeating: "i", count: 64))?[attribute: "type"] == "result")
        #expect(romeo.configure(Self.tune, ["pubsub#title": long])?.errorCondition == "not-acceptable")
        #expect(romeo.configure(Self.tune, ["pubsub#title": "Tunes"])?[attribute: "type"] == "result")
    }

    @Test func anAccountsItemsFitInItsQuota() throws {
        var config = ServerConfig()
        config.limits.pepQuota = 1 << 10
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        let big = "<tune xmlns='http://jabber.org/protocol/tune'><title>\(String(repeating: "x", count: 500))</title></tune>"
        #expect(romeo.publish(big, to: Self.tune, id: "a")?[attribute: "type"] == "result")
        let refused = try #require(romeo.publish(big, to: "other", id: "b"))
        #expect(refused.errorCondition == "resource-constraint")
        #expect(romeo.publish(big, to: Self.tune, id: "a")?[attribute: "type"] == "result", "the item replaced does not count")
        let purge = "<iq type='set' id='p'><pubsub xmlns='\(NS.pubsubOwner)'><purge node='\(Self.tune)'/></pubsub></iq>"
        #expect(romeo.request(purge, id: "p")?[attribute: "type"] == "result")
        #expect(romeo.publish(big, to: "other", id: "b")?[attribute: "type"] == "result", "room again")
    }

    @Test func aLoweredMaxItemsLimitBoundsNodesAndMaxStillHolds() throws {
        let stores = Stores(accounts: InMemoryAccountStore())
        var before = ServerConfig()
        before.limits.pepMaxItems = 5
        let first = try TestServer(config: before, storage: { InlineStorage(loop: $0, stores: stores) })
        try first.addUser("romeo", password: "pw")
        let earlier = first.connect()
        try earlier.login("romeo", "pw", resource: "orchard")
        for id in ["1", "2", "3", "4"] {
            _ = earlier.publish(Self.song, to: Self.tune, id: id, options: ["pubsub#max_items": "max"])
        }
        var after = ServerConfig()
        after.limits.pepMaxItems = 2
        let server = try TestServer(config: after, storage: { InlineStorage(loop: $0, stores: stores) })
        let romeo = server.connect()
        try romeo.login("romeo", "pw", resource: "orchard")
        #expect(romeo.items(of: Self.tune, at: "romeo@localhost")?.pubsubItemIDs == ["4", "3"], "the newest pep_max_items")
        #expect(romeo.configuration(of: Self.tune)?["pubsub#max_items"] == "2")
        let again = romeo.publish(Self.song, to: Self.tune, id: "5", options: ["pubsub#max_items": "max"])
        #expect(again?[attribute: "type"] == "result", "max: as many as allowed now")
        #expect(try stores.pep.itemIDs(of: Self.tune, owner: "romeo") == ["5", "4"], "the node keeps no more")
    }

    @Test func onlyTheBareJIDOrABoundResourceMaySubscribe() throws {
        let (_, romeo, _, mercutio) = try romeoJulietAndAStranger()
        _ = romeo.publish(Self.song, to: Self.tune, id: "t", options: ["pubsub#access_model": "open"])
        let madeUp = try #require(mercutio.request(Self.subscribe(Self.tune, jid: "mercutio@localhost/nowhere"), id: "sub"))
        #expect(madeUp.errorCondition == "bad-request")
        #expect(madeUp.pubsubCondition == "invalid-jid")
        #expect(mercutio.request(Self.subscribe(Self.tune, jid: "mercutio@localhost/street"), id: "sub")?[attribute: "type"] == "result")
        #expect(mercutio.request(Self.subscribe(Self.tune, jid: "mercutio@localhost"), id: "sub")?[attribute: "type"] == "result")
    }

    @Test func anAccountHoldsAtMostTheConfiguredSubscriptions() throws {
        var config = ServerConfig()
        config.limits.pepMaxSubscriptions = 2
        let (_, romeo, juliet, mercutio) = try romeoJulietAndAStranger(config: config)
        for node in ["a", "b"] { _ = romeo.publish(Self.song, to: node, id: "t", options: ["pubsub#access_model": "open"]) }
        _ = juliet.publish(Self.song, to: "c", id: "t", options: ["pubsub#access_model": "open"])
        #expect(mercutio.request(Self.subscribe("a", jid: "mercutio@localhost"), id: "sub")?[attribute: "type"] == "result")
        #expect(mercutio.request(Self.subscribe("a", jid: "mercutio@localhost/street"), id: "sub")?[attribute: "type"] == "result")
        let refused = try #require(mercutio.request(Self.subscribe("c", jid: "mercutio@localhost", at: "juliet@localhost"), id: "sub"))
        #expect(refused.errorCondition == "policy-violation")
        #expect(refused.pubsubCondition == "too-many-subscriptions")
        #expect(mercutio.request(Self.subscribe("a", jid: "mercutio@localhost"), id: "sub")?[attribute: "type"] == "result", "again takes no room")
        #expect(romeo.request(Self.subscribe("b", jid: "romeo@localhost"), id: "sub")?[attribute: "type"] == "result")
    }
}
