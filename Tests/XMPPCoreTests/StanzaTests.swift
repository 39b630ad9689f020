import Testing
@testable import XMPPCore

/// Builds a stanza element from attribute pairs and children.
private func stanza(
    _ name: String, _ attributes: KeyValuePairs<String, String> = [:], namespace: String = "jabber:client",
    _ children: Element...
) -> Element {
    Element(name, namespace: namespace, attributes: attributes, children: children.map { .element($0) })
}

/// A child in `jabber:client` holding `text`, optionally with `xml:lang`.
private func textChild(_ name: String, _ text: String, lang: String? = nil) -> Element {
    var element = Element(name, namespace: "jabber:client", children: [.text(text)])
    element[attribute: "lang", namespace: "http://www.w3.org/XML/1998/namespace"] = lang
    return element
}

private let ping = Element("ping", namespace: "urn:xmpp:ping")

@Suite struct StanzaTests {
    // MARK: Stanza

    @Test func acceptsTheThreeKindsInBothStanzaNamespaces() {
        for name in ["message", "presence", "iq"] {
            for namespace in ["jabber:client", "jabber:server"] {
                #expect(Stanza(stanza(name, namespace: namespace))?.kind.rawValue == name)
            }
        }
        #expect(Message(stanza("message", namespace: "jabber:server")) != nil)
        #expect(Presence(stanza("presence")) != nil)
        #expect(IQ(stanza("iq")) != nil)
    }

    @Test func rejectsOtherElements() {
        #expect(Stanza(stanza("features", namespace: "http://etherx.jabber.org/streams")) == nil)
        #expect(Stanza(stanza("message", namespace: "jabber:component:accept")) == nil)
        #expect(Stanza(stanza("enable", namespace: "urn:xmpp:sm:3")) == nil)
        #expect(Message(stanza("presence")) == nil)
        #expect(Presence(stanza("iq")) == nil)
        #expect(IQ(stanza("message")) == nil)
    }

    @Test func commonAttributes() throws {
        var element = stanza("message", ["to": "juliet@example.com/balcony", "from": "romeo@example.net", "id": "m1"])
        element[attribute: "lang", namespace: "http://www.w3.org/XML/1998/namespace"] = "en"
        let message = try #require(Stanza(element))
        #expect(message.to == (try JID("juliet@example.com/balcony")))
        #expect(message.from?.description == "romeo@example.net")
        #expect(message.id == "m1")
        #expect(message.language == "en")
        #expect(message.type == nil)
        #expect(!message.isError)
    }

    @Test func settingAddressesWritesTheJID() throws {
        var message = Message()
        message.to = try JID("juliet@example.com")
        message.from = try JID("romeo@example.net/orchard")
        #expect(message.element[attribute: "to"] == "juliet@example.com")
        #expect(message.element[attribute: "from"] == "romeo@example.net/orchard")
        message.to = nil
        #expect(message.element[attribute: "to"] == nil)
    }

    @Test func invalidAddressIsNilButRecipientThrows() throws {
        let message = try #require(Message(stanza("message", ["to": "@example.com", "from": "juliet@"])))
        #expect(message.to == nil)
        #expect(message.from == nil)
        #expect(throws: JIDError.self) { try message.recipient() }
        #expect(throws: JIDError.self) { try message.sender() }
    }

    @Test func absentAddressIsNilWithoutThrowing() throws {
        let iq = try #require(IQ(stanza("iq", ["type": "get", "id": "1"], ping)))
        #expect(try iq.recipient() == nil)
        #expect(try iq.sender() == nil)
    }

    @Test func errorStanzaExposesItsError() throws {
        let error = StanzaError(.itemNotFound).element()
        let reply = try #require(Stanza(stanza("iq", ["type": "error", "id": "1"], ping, error)))
        #expect(reply.isError)
        #expect(reply.error == StanzaError(.itemNotFound))
        #expect(Stanza(stanza("iq", ["type": "result", "id": "1"]))?.error == nil)
    }

    // MARK: Message

    @Test func messageTypes() throws {
        let table: [(String, Message.MessageType)] = [
            ("chat", .chat), ("error", .error), ("groupchat", .groupchat), ("headline", .headline),
            ("normal", .normal),
        ]
        #expect(table.count == Message.MessageType.allCases.count)
        for (wire, type) in table {
            #expect(Message(stanza("message", ["type": wire]))?.type == type)
        }
    }

    @Test func messageTypeDefaultsToNormal() {
        #expect(Message(stanza("message"))?.type == .normal)
        #expect(Message(stanza("message", ["type": "bogus"]))?.type == .normal)
        #expect(Message(stanza("message", ["type": "Chat"]))?.type == .normal)
    }

    @Test func newMessageLeavesTypeOutUnlessGiven() throws {
        #expect(Message().element[attribute: "type"] == nil)
        var message = Message(type: .chat, to: try JID("juliet@example.com"), id: "c1", body: "Hi")
        #expect(message.element[attribute: "type"] == "chat")
        #expect(message.element[attribute: "id"] == "c1")
        #expect(message.element.childText("body") == "Hi")
        message.type = .headline
        #expect(message.element[attribute: "type"] == "headline")
    }

    @Test func bodyPrefersTheStanzaLanguage() throws {
        var element = stanza(
            "message", [:], textChild("body", "Bonjour", lang: "fr"), textChild("body", "Hallo", lang: "de"))
        element[attribute: "lang", namespace: NS.xml] = "de"
        var message = try #require(Message(element))
        #expect(message.body == "Hallo")
        message.language = "it"
        #expect(message.body == "Bonjour")
        let onlyFrench = try #require(Message(stanza("message", [:], textChild("body", "Salut", lang: "fr"))))
        #expect(onlyFrench.body == "Salut")
    }

    @Test func bodiesAreKeyedByEffectiveLanguage() throws {
        var element = stanza(
            "message", [:], textChild("body", "Bonjour", lang: "fr"), textChild("body", "Hello"),
            textChild("body", "Hallo", lang: "de"))
        element[attribute: "lang", namespace: NS.xml] = "en"
        var message = try #require(Message(element))
        #expect(message.body == "Hello")
        #expect(message.bodies == ["fr": "Bonjour", "en": "Hello", "de": "Hallo"])
        message.language = nil
        #expect(message.body == "Hello")
        #expect(message.bodies == ["fr": "Bonjour", "": "Hello", "de": "Hallo"])
    }

    @Test func settingBodyReplacesEveryBody() throws {
        var message = try #require(Message(stanza("message", [:], textChild("body", "a"), textChild("body", "b", lang: "fr"))))
        message.body = "c"
        #expect(message.element.elements == [textChild("body", "c")])
        message.body = nil
        #expect(message.element.elements.isEmpty)
    }

    @Test func subjectAndThread() throws {
        var message = Message(type: .chat)
        message.subject = "Balcony"
        message.thread = Message.Thread("e0ffe42b", parent: "7edac73ab")
        let thread = try #require(message.element.child("thread"))
        #expect(thread.text == "e0ffe42b")
        #expect(thread[attribute: "parent"] == "7edac73ab")
        let reread = try #require(Message(message.element))
        #expect(reread.subject == "Balcony")
        #expect(reread.thread == Message.Thread("e0ffe42b", parent: "7edac73ab"))
        message.thread = nil
        #expect(message.element.child("thread") == nil)
        #expect(Message(stanza("message", [:], textChild("thread", "t")))?.thread == Message.Thread("t"))
    }

    // MARK: Presence

    @Test func presenceTypes() {
        let table: [(String?, Presence.PresenceType)] = [
            (nil, .available), ("unavailable", .unavailable), ("subscribe", .subscribe),
            ("subscribed", .subscribed), ("unsubscribe", .unsubscribe), ("unsubscribed", .unsubscribed),
            ("probe", .probe), ("error", .error),
        ]
        #expect(table.count == Presence.PresenceType.allCases.count)
        for (wire, type) in table {
            var element = stanza("presence")
            element[attribute: "type"] = wire
            #expect(Presence(element)?.type == type)
            #expect(Presence(type: type).element[attribute: "type"] == wire)
        }
    }

    @Test func undefinedPresenceTypeIsNilAndInvalid() throws {
        for wire in ["available", "", "invisible"] {
            let presence = try #require(Presence(stanza("presence", ["type": wire])))
            #expect(presence.type == nil)
            #expect(throws: StanzaError(.badRequest, text: "Unknown presence type")) { try presence.validate() }
        }
    }

    @Test func settingAvailableRemovesTheType() {
        var presence = Presence(type: .unavailable)
        presence.type = .available
        #expect(presence.element.attributes.isEmpty)
    }

    @Test func showAndStatus() throws {
        let presence = Presence(show: .dnd, status: "Busy", priority: 5)
        #expect(presence.element.childText("show") == "dnd")
        let reread = try #require(Presence(presence.element))
        #expect(reread.show == .dnd)
        #expect(reread.status == "Busy")
        #expect(try reread.priority == 5)
        #expect(Presence(stanza("presence", [:], textChild("show", "busy")))?.show == nil)
        let wires = Presence.Show.allCases.map(\.rawValue)
        #expect(wires == ["away", "chat", "dnd", "xa"])
    }

    @Test(arguments: [
        ("0", 0), ("5", 5), ("-1", -1), ("127", 127), ("-128", -128), ("+3", 3), (" 7\n", 7),
    ] as [(String, Int8)])
    func validPriorities(wire: String, value: Int8) throws {
        let presence = try #require(Presence(stanza("presence", [:], textChild("priority", wire))))
        #expect(try presence.priority == value)
        try presence.validate()
    }

    @Test(arguments: ["128", "-129", "1000", "abc", "1.5", "", "0x10"])
    func invalidPrioritiesAreBadRequest(wire: String) throws {
        let presence = try #require(Presence(stanza("presence", [:], textChild("priority", wire))))
        #expect(throws: StanzaError.self) { try presence.priority }
        do throws(StanzaError) {
            try presence.validate()
            Issue.record("priority \(wire) accepted")
        } catch {
            #expect(error.condition == .badRequest)
            #expect(error.type == .modify)
        }
    }

    @Test func missingPriorityIsZero() throws {
        #expect(try Presence().priority == 0)
        #expect(Presence().element.children.isEmpty)
    }

    // MARK: IQ

    @Test func iqTypes() {
        for (wire, type) in [("get", IQ.IQType.get), ("set", .set), ("result", .result), ("error", .error)] {
            #expect(IQ(stanza("iq", ["type": wire, "id": "1"]))?.type == type)
        }
        #expect(IQ.IQType.allCases.count == 4)
        #expect(IQ(stanza("iq", ["type": "GET"]))?.type == nil)
        #expect(IQ(stanza("iq"))?.type == nil)
    }

    @Test(arguments: [
        stanza("iq", ["type": "get", "id": "1"], ping),
        stanza("iq", ["type": "set", "id": "1"], ping),
        stanza("iq", ["type": "result", "id": "1"]),
        stanza("iq", ["type": "result", "id": "1"], ping),
        stanza("iq", ["type": "error", "id": "1"], StanzaError(.conflict).element()),
        stanza("iq", ["type": "error", "id": "1"], ping, StanzaError(.conflict).element()),
        stanza("iq", ["type": "get", "id": "1"], namespace: "jabber:server", ping),
    ])
    func validIQs(element: Element) throws {
        try #require(IQ(element)).validate()
    }

    @Test(arguments: [
        stanza("iq", ["type": "get"], ping),
        stanza("iq", ["type": "get", "id": ""], ping),
        stanza("iq", ["id": "1"], ping),
        stanza("iq", ["type": "fetch", "id": "1"], ping),
        stanza("iq", ["type": "get", "id": "1"]),
        stanza("iq", ["type": "set", "id": "1"], ping, ping),
        stanza("iq", ["type": "result", "id": "1"], ping, ping),
        stanza("iq", ["type": "error", "id": "1"], ping),
        stanza("iq", ["type": "error", "id": "1"], Element("error", namespace: "urn:example")),
    ])
    func invalidIQsAreBadRequest(element: Element) throws {
        let iq = try #require(IQ(element))
        do throws(StanzaError) {
            try iq.validate()
            Issue.record("accepted \(element)")
        } catch {
            #expect(error.condition == .badRequest)
        }
    }

    @Test func validationIgnoresWhitespaceText() throws {
        var element = stanza("iq", ["type": "get", "id": "1"])
        element.append(text: "\n  ")
        element.append(ping)
        element.append(text: "\n")
        try #require(IQ(element)).validate()
    }

    @Test func payloadSkipsTheErrorAndSettingKeepsIt() throws {
        let error = StanzaError(.forbidden).element()
        var iq = try #require(IQ(stanza("iq", ["type": "error", "id": "1"], error, ping)))
        #expect(iq.payload == ping)
        let query = Element("query", namespace: "jabber:iq:roster")
        iq.payload = query
        #expect(iq.element.elements == [query, error])
        iq.payload = nil
        #expect(iq.element.elements == [error])
    }

    @Test func newIQ() throws {
        let iq = IQ(type: .get, to: try JID("example.com"), id: "p1", payload: ping)
        #expect(iq.element == stanza("iq", ["type": "get", "to": "example.com", "id": "p1"], ping))
        try iq.validate()
    }

    // MARK: Replies

    @Test func iqErrorReplySwapsAddressesKeepsIdAndPayload() throws {
        let query = Element("query", namespace: "jabber:iq:register")
        let request = try #require(IQ(stanza(
            "iq", ["type": "set", "id": "reg1", "to": "example.com", "from": "alice@example.com/phone"], query)))
        let reply = try #require(request.errorReply(StanzaError(.conflict)))
        #expect(reply[attribute: "type"] == "error")
        #expect(reply[attribute: "id"] == "reg1")
        #expect(reply[attribute: "to"] == "alice@example.com/phone")
        #expect(reply[attribute: "from"] == "example.com")
        #expect(reply.elements.first == query)
        let error = try #require(reply.child("error", namespace: "jabber:client"))
        #expect(error[attribute: "code"] == "409")
        #expect(error[attribute: "type"] == "cancel")
        #expect(error.child("conflict", namespace: "urn:ietf:params:xml:ns:xmpp-stanzas") != nil)
        #expect(IQ(reply)?.error == StanzaError(.conflict))
        try #require(IQ(reply)).validate()
    }

    @Test func replyWithoutFromHasNoTo() throws {
        let request = try #require(IQ(stanza("iq", ["type": "get", "id": "p", "to": "example.com"], ping)))
        let reply = try #require(request.errorReply(StanzaError(.serviceUnavailable)))
        #expect(reply[attribute: "to"] == nil)
        #expect(reply[attribute: "from"] == "example.com")
        let result = request.result()
        #expect(result == stanza("iq", ["type": "result", "id": "p", "from": "example.com"]))
    }

    @Test func messageErrorReplyKeepsTheBodyAndLanguage() throws {
        var element = stanza(
            "message", ["type": "chat", "id": "m1", "to": "nobody@example.com", "from": "juliet@example.com/balcony"],
            namespace: "jabber:server", textChild("body", "Wherefore art thou?"))
        element[attribute: "lang", namespace: NS.xml] = "en"
        let reply = try #require(Message(element)?.errorReply(StanzaError(.serviceUnavailable)))
        #expect(reply.namespace == "jabber:server")
        #expect(reply[attribute: "type"] == "error")
        #expect(reply[attribute: "lang", namespace: NS.xml] == "en")
        #expect(reply[attribute: "to"] == "juliet@example.com/balcony")
        #expect(reply[attribute: "from"] == "nobody@example.com")
        #expect(reply.elements.map(\.name) == ["body", "error"])
        #expect(reply.child("error", namespace: "jabber:server")?[attribute: "code"] == "503")
        #expect(Message(reply)?.type == .error)
    }

    @Test func neverAnswersAnErrorWithAnError() throws {
        let bounced = try #require(Message(stanza("message", ["type": "error", "id": "1"], StanzaError(.gone).element())))
        #expect(bounced.errorReply(StanzaError(.badRequest)) == nil)
        let presence = try #require(Presence(stanza("presence", ["type": "error"])))
        #expect(presence.errorReply(StanzaError(.badRequest)) == nil)
        let iq = try #require(Stanza(stanza("iq", ["type": "error", "id": "1"])))
        #expect(iq.errorReply(StanzaError(.badRequest)) == nil)
    }

    @Test func resultSwapsAddressesAndCarriesOnlyThePayload() throws {
        let request = try #require(IQ(stanza(
            "iq", ["type": "get", "id": "r1", "from": "alice@example.com/phone", "to": "alice@example.com"],
            namespace: "jabber:server", Element("query", namespace: "jabber:iq:roster"))))
        let item = Element("query", namespace: "jabber:iq:roster", attributes: ["ver": "3"])
        let result = request.result(payload: item)
        #expect(result.namespace == "jabber:server")
        #expect(result[attribute: "type"] == "result")
        #expect(result[attribute: "id"] == "r1")
        #expect(result[attribute: "to"] == "alice@example.com/phone")
        #expect(result[attribute: "from"] == "alice@example.com")
        #expect(result.children == [.element(item)])
        try #require(IQ(result)).validate()
    }
}
