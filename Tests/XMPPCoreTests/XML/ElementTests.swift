import Testing
@testable import XMPPCore

@Suite struct ElementTests {
    @Test func attributeSubscriptAddsReplacesAndRemoves() {
        var element = Element("message", namespace: "jabber:client")
        element[attribute: "to"] = "juliet@example.com"
        #expect(element[attribute: "to"] == "juliet@example.com")
        element[attribute: "to"] = "romeo@example.net"
        #expect(element.attributes.count == 1)
        #expect(element[attribute: "to"] == "romeo@example.net")
        element[attribute: "to"] = nil
        #expect(element.attributes.isEmpty)
    }

    @Test func childLookupDefaultsToOwnNamespace() {
        var message = Element("message", namespace: "jabber:client")
        var body = Element("body", namespace: "jabber:client")
        body.append(text: "Art thou ")
        body.append(text: "not Romeo?")
        message.append(Element("body", namespace: "urn:example:other"))
        message.append(body)
        #expect(message.childText("body") == "Art thou not Romeo?")
        #expect(message.child("body", namespace: "urn:example:other")?.text == "")
        message.removeChildren("body", namespace: "jabber:client")
        #expect(message.child("body") == nil)
        #expect(message.elements.count == 1)
    }
}
