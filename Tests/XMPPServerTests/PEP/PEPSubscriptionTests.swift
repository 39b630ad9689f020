import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0060 §6.1, §6.2 on PEP: whom a node's access model lets read may
/// subscribe, contact or not, and gets every publication whatever its
/// capabilities, and the last item at once.
@Suite struct PEPSubscriptionTests {
    static let devices = "urn:xmpp:omemo:2:devices"
    static func deviceList(_ id: Int) -> String { "<devices xmlns='urn:xmpp:omemo:2'><device id='\(id)'/></devices>" }

    private func subscription(_ operation: String, _ node: String, jid: String, at owner: String = "romeo@localhost") -> String {
        "<iq type='set' id='sub' to='\(owner)'><pubsub xmlns='\(NS.pubsub)'><\(operation) node='\(node)' jid='\(jid)'/></pubsub></iq>"
    }

    private static func notifications(_ elements: [Element]) -> [Element] {
        elements.filter { $0.name == "message" && $0[attribute: "type"] == "headline" }
    }

    @Test func aStrangerSubscribesToAnOpenNodeAndGetsEveryPublication() throws {
        let (_, romeo, _, mercutio) = try romeoJulietAndAStranger()
        _ = romeo.publish(Self.deviceList(1), to: Self.devices, id: "current", options: ["pubsub#access_model": "open"])
        mercutio.send(subscription("subscribe", Self.devices, jid: "mercutio@localhost"))
        let received = mercutio.receiveElements()
        let result = try #require(received.first { $0[attribute: "id"] == "sub" })
        let granted = result.child("pubsub", namespace: NS.pubsub)?.child("subscription", namespace: NS.pubsub)
        #expect(granted?[attribute: "subscription"] == "subscribed")
        #expect(granted?[attribute: "jid"] == "mercutio@localhost")
        let last = Self.notifications(received)
        #expect(last.map(\.pubsubItemIDs) == [["current"]], "the last item at once (§6.1.7)")
        #expect(last.first?.child("delay", namespace: NS.delay) != nil)
        _ = romeo.publish(Self.deviceList(2), to: Self.devices, id: "current")
        #expect(Self.notifications(mercutio.receiveElements()).map(\.pubsubItemIDs) == [["current"]], "no caps needed")
        #expect(mercutio.request(subscription("unsubscribe", Self.devices, jid: "mercutio@localhost"), id: "sub")?[attribute: "type"] == "result")
        _ = romeo.publish(Self.deviceList(3), to: Self.devices, id: "current")
        #expect(Self.notifications(mercutio.receiveElements()).isEmpty)
        let again = try #require(mercutio.request(subscription("unsubscribe", Self.devices, jid: "mercutio@localhost"), id: "sub"))
        #expect(again.errorCondition == "unexpected-request")
        #expect(again.pubsubCondition == "not-subscribed")
    }

    @Test func theAccessModelDecidesWhoMaySubscribe() throws {
        let (_, romeo, juliet, mercutio) = try romeoJulietAndAStranger()
        _ = romeo.publish(Self.deviceList(1), to: "presence-node", id: "a")
        _ = romeo.publish(Self.deviceList(1), to: "private", id: "a", options: ["pubsub#access_model": "whitelist"])
        let presence = try #require(mercutio.request(subscription("subscribe", "presence-node", jid: "mercutio@localhost"), id: "sub"))
        #expect(presence.errorCondition == "not-authorized")
        #expect(presence.pubsubCondition == "presence-subscription-required")
        #expect(juliet.request(subscription("subscribe", "presence-node", jid: "juliet@localhost"), id: "sub")?[attribute: "type"] == "result", "a contact may")
        let closed = try #require(juliet.request(subscription("subscribe", "private", jid: "juliet@localhost"), id: "sub"))
        #expect(closed.errorCondition == "not-allowed")
        #expect(closed.pubsubCondition == "closed-node")
        let someoneElse = try #require(mercutio.request(subscription("subscribe", "presence-node", jid: "juliet@localhost"), id: "sub"))
        #expect(someoneElse.errorCondition == "bad-request")
        #expect(someoneElse.pubsubCondition == "invalid-jid")
        #expect(mercutio.request(subscription("subscribe", "missing", jid: "mercutio@localhost"), id: "sub")?.errorCondition == "item-not-found")
    }

    @Test func aNodeKeepsAtMostTheConfiguredSubscribers() throws {
        var config = ServerConfig()
        config.limits.pepMaxSubscribers = 1
        let (_, romeo, juliet, mercutio) = try romeoJulietAndAStranger(config: config)
        _ = romeo.publish(Self.deviceList(1), to: Self.devices, id: "current", options: ["pubsub#access_model": "open"])
        #expect(mercutio.request(subscription("subscribe", Self.devices, jid: "mercutio@localhost"), id: "sub")?[attribute: "type"] == "result")
        #expect(juliet.request(subscription("subscribe", Self.devices, jid: "juliet@localhost"), id: "sub")?.errorCondition == "policy-violation")
        #expect(mercutio.request(subscription("subscribe", Self.devices, jid: "mercutio@localhost"), id: "sub")?[attribute: "type"] == "result", "subscribing again takes no room")
    }

    @Test func aSubscriberTheAccessModelNoLongerAllowsHearsNothing() throws {
        let (_, romeo, _, mercutio) = try romeoJulietAndAStranger()
        _ = romeo.publish(Self.deviceList(1), to: Self.devices, id: "current", options: ["pubsub#access_model": "open"])
        _ = mercutio.request(subscription("subscribe", Self.devices, jid: "mercutio@localhost"), id: "sub")
        #expect(romeo.configure(Self.devices, ["pubsub#access_model": "presence"])?[attribute: "type"] == "result")
        _ = romeo.publish(Self.deviceList(2), to: Self.devices, id: "current")
        #expect(Self.notifications(mercutio.receiveElements()).isEmpty)
    }

    @Test func aFullJIDSubscriptionServesThatResourceAndEachResourceHearsOnce() throws {
        let (server, romeo, juliet, _) = try romeoJulietAndAStranger()
        juliet.announce(TestCaps(notify: [Self.devices]))
        let window = server.connect()
        try window.login("juliet", "pw", resource: "window")
        window.send("<presence/>")
        _ = window.receiveElements()
        _ = romeo.publish(Self.deviceList(1), to: Self.devices, id: "current", options: ["pubsub#access_model": "open"])
        _ = juliet.receiveElements()
        let subscribe = subscription("subscribe", Self.devices, jid: "juliet@localhost/balcony")
        #expect(juliet.request(subscribe, id: "sub")?[attribute: "type"] == "result")
        _ = romeo.publish(Self.deviceList(2), to: Self.devices, id: "current")
        #expect(Self.notifications(juliet.receiveElements()).count == 1, "interested and subscribed: one notification")
        #expect(Self.notifications(window.receiveElements()).isEmpty, "the subscription is the balcony's")
    }
}
