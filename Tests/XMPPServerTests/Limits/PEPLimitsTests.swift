import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// Personal eventing cannot be made to hold without bound: nodes per
/// account (`pep_max_nodes`) and bytes per item (`pep_max_item_size`).
@Suite struct PEPLimitsTests {
    private func publish(_ node: String, _ payload: String, id: String = "current") -> String {
        "<iq type='set' id='pub'><pubsub xmlns='http://jabber.org/protocol/pubsub'><publish node='\(node)'>"
            + "<item id='\(id)'>\(payload)</item></publish></pubsub></iq>"
    }

    @Test func aNodeBeyondTheLimitIsRefusedWhetherCreatedOrAutoCreated() throws {
        var config = ServerConfig()
        config.limits.pepMaxNodes = 2
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        for node in ["urn:test:a", "urn:test:b"] {
            romeo.send(publish(node, "<x xmlns='urn:test'/>"))
            #expect(try romeo.receiveOne()[attribute: "type"] == "result")
        }
        romeo.send(publish("urn:test:c", "<x xmlns='urn:test'/>"))
        let refused = try romeo.receiveOne()
        #expect(refused.errorCondition == "policy-violation")
        #expect(refused.child("error")?.child("max-nodes-exceeded", namespace: NS.pubsubErrors) != nil)
        romeo.send("<iq type='set' id='c'><pubsub xmlns='http://jabber.org/protocol/pubsub'><create node='urn:test:d'/></pubsub></iq>")
        #expect(try romeo.receiveOne().errorCondition == "policy-violation")
        // Publishing to a node that exists is still fine.
        romeo.send(publish("urn:test:a", "<x xmlns='urn:test'>again</x>", id: "next"))
        #expect(try romeo.receiveOne()[attribute: "type"] == "result")
    }

    @Test func anItemLargerThanTheLimitIsPayloadTooBig() throws {
        var config = ServerConfig()
        config.limits.pepMaxItemSize = 1 << 10
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        romeo.send(publish("urn:test:a", "<x xmlns='urn:test'>\(String(repeating: "z", count: 2000))</x>"))
        let refused = try romeo.receiveOne()
        #expect(refused.errorCondition == "not-acceptable")
        #expect(refused.child("error")?.child("payload-too-big", namespace: NS.pubsubErrors) != nil)
        romeo.send(publish("urn:test:a", "<x xmlns='urn:test'>\(String(repeating: "z", count: 900))</x>"))
        #expect(try romeo.receiveOne()[attribute: "type"] == "result")
    }
}
