import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// XEP-0049 private XML storage (`PrivateStorage`).
@Suite struct PrivateStorageTests {
    static let prefs = "<exodus xmlns='exodus:prefs'><defaultnick>Hamlet</defaultnick></exodus>"

    @Test func anElementIsStoredAndReadBackFromAnotherResource() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        let set = romeo.privateStorage("set", Self.prefs)
        #expect(set?[attribute: "type"] == "result")
        #expect(set?.child("query", namespace: NS.privateStorage) == nil, "an empty result")
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        let get = phone.privateStorage("get", "<exodus xmlns='exodus:prefs'/>")
        #expect(get?[attribute: "type"] == "result")
        #expect(get?.privateElement == parsedElement(Self.prefs))
    }

    @Test func nothingStoredAnswersTheElementAsAsked() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        #expect(romeo.privateStorage("set", Self.prefs)?[attribute: "type"] == "result")
        let get = juliet.privateStorage("get", "<exodus xmlns='exodus:prefs'/>")
        #expect(get?[attribute: "type"] == "result")
        #expect(get?.privateElement == parsedElement("<exodus xmlns='exodus:prefs'/>"), "each account has its own")
    }

    @Test func aSetReplacesAndAnEmptyElementRemoves() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        _ = romeo.privateStorage("set", Self.prefs)
        _ = romeo.privateStorage("set", "<exodus xmlns='exodus:prefs'><defaultnick>Romeo</defaultnick></exodus>")
        #expect(
            romeo.privateStorage("get", "<exodus xmlns='exodus:prefs'/>")?.privateElement?.childText("defaultnick")
                == "Romeo")
        #expect(romeo.privateStorage("set", "<exodus xmlns='exodus:prefs'/>")?[attribute: "type"] == "result")
        #expect(
            romeo.privateStorage("get", "<exodus xmlns='exodus:prefs'/>")?.privateElement
                == parsedElement("<exodus xmlns='exodus:prefs'/>"))
    }

    @Test func elementsOfOneNamespaceAreKeptByName() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        _ = romeo.privateStorage("set", "<a xmlns='urn:test'>1</a>")
        _ = romeo.privateStorage("set", "<b xmlns='urn:test'>2</b>")
        #expect(romeo.privateStorage("get", "<a xmlns='urn:test'/>")?.privateElement?.text == "1")
        #expect(romeo.privateStorage("get", "<b xmlns='urn:test'/>")?.privateElement?.text == "2")
    }

    @Test(arguments: ["get", "set"])
    func anotherUsersPrivateXMLIsForbidden(type: String) throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        _ = romeo.privateStorage("set", Self.prefs)
        let reply = juliet.privateStorage(type, Self.prefs, to: "romeo@localhost")
        #expect(reply?[attribute: "type"] == "error")
        #expect(reply?.errorCondition == "forbidden")
    }

    @Test func theOwnBareJIDIsTheAccount() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        #expect(romeo.privateStorage("set", Self.prefs, to: "romeo@localhost")?[attribute: "type"] == "result")
        let get = romeo.privateStorage("get", "<exodus xmlns='exodus:prefs'/>", to: "romeo@localhost")
        #expect(get?.privateElement == parsedElement(Self.prefs))
        #expect(get?[attribute: "from"] == "romeo@localhost")
    }

    @Test(arguments: [
        "", "<a xmlns='urn:test'/><b xmlns='urn:test'/>", "<defaultnick/>", "<x xmlns='jabber:server'/>",
        "<query xmlns='jabber:iq:private'/>",
    ])
    func notExactlyOneElementOfItsOwnNamespaceIsNotAcceptable(content: String) throws {
        let (_, romeo, _) = try romeoAndJuliet()
        for type in ["get", "set"] {
            let reply = romeo.privateStorage(type, content)
            #expect(reply?[attribute: "type"] == "error")
            #expect(reply?.errorCondition == "not-acceptable")
        }
    }

    @Test func anElementOverTheSizeLimitIsNotAcceptable() throws {
        var config = ServerConfig()
        config.limits.privateStorageMaxSize = 1024
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        let big = "<big xmlns='urn:test'>" + String(repeating: "x", count: 1024) + "</big>"
        let reply = romeo.privateStorage("set", big)
        #expect(reply?.errorCondition == "not-acceptable")
        #expect(romeo.privateStorage("get", "<big xmlns='urn:test'/>")?.privateElement?.text == "", "nothing stored")
        #expect(romeo.privateStorage("set", "<big xmlns='urn:test'>small</big>")?[attribute: "type"] == "result")
    }

    @Test func elementsBeyondTheCountLimitAreAResourceConstraint() throws {
        var config = ServerConfig()
        config.limits.privateStorageMaxElements = 2
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        _ = romeo.privateStorage("set", "<a xmlns='urn:test'>1</a>")
        _ = romeo.privateStorage("set", "<b xmlns='urn:test'>2</b>")
        #expect(romeo.privateStorage("set", "<c xmlns='urn:test'>3</c>")?.errorCondition == "resource-constraint")
        #expect(romeo.privateStorage("set", "<b xmlns='urn:test'>4</b>")?[attribute: "type"] == "result", "a replacement fits")
        _ = romeo.privateStorage("set", "<a xmlns='urn:test'/>")
        #expect(romeo.privateStorage("set", "<c xmlns='urn:test'>3</c>")?[attribute: "type"] == "result", "a removal frees room")
    }

    @Test func theAccountAdvertisesPrivateStorageAndBookmarksCompat() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let info = romeo.request(
            "<iq type='get' id='info' to='romeo@localhost'><query xmlns='\(NS.discoInfo)'/></iq>", id: "info")
        let features = Set(info?.child("query", namespace: NS.discoInfo)?.elements.compactMap { $0[attribute: "var"] } ?? [])
        #expect(
            features.isSuperset(of: [
                NS.privateStorage, "urn:xmpp:bookmarks:1#compat", "urn:xmpp:bookmarks:1#compat-pep", NS.pepVCardConversion,
            ]))
    }
}
