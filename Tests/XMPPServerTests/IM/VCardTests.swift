import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0054 vcard-temp and the XEP-0153 presence it goes with.
@Suite struct VCardTests {
    private static let vCard = "<vCard xmlns='vcard-temp'><FN>Romeo Montague</FN><N><FAMILY>Montague</FAMILY><GIVEN>Romeo</GIVEN></N></vCard>"

    @Test func ownVCardIsSetWithoutToAndReadByAnyone() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        let set = romeo.request("<iq type='set' id='s'>\(Self.vCard)</iq>", id: "s")
        #expect(set?[attribute: "type"] == "result")
        // XMPPFramework reads its own vCard from its bare JID.
        let own = romeo.request("<iq type='get' id='g' to='romeo@localhost'><vCard xmlns='vcard-temp'/></iq>", id: "g")
        #expect(own?[attribute: "from"] == "romeo@localhost")
        #expect(own?.child("vCard", namespace: NS.vcard)?.childText("FN", namespace: NS.vcard) == "Romeo Montague")
        let noTo = romeo.request("<iq type='get' id='g2'><vCard xmlns='vcard-temp'/></iq>", id: "g2")
        #expect(noTo?.child("vCard", namespace: NS.vcard)?.child("N", namespace: NS.vcard)?.childText("GIVEN", namespace: NS.vcard) == "Romeo")
        // Juliet has no subscription to romeo: a vCard is public on the server.
        let theirs = juliet.request("<iq type='get' id='j' to='romeo@localhost'><vCard xmlns='vcard-temp'/></iq>", id: "j")
        #expect(theirs?[attribute: "type"] == "result")
        #expect(theirs?[attribute: "from"] == "romeo@localhost")
        #expect(theirs?[attribute: "to"] == "juliet@localhost/balcony")
        #expect(theirs?.child("vCard", namespace: NS.vcard)?.childText("FN", namespace: NS.vcard) == "Romeo Montague")
    }

    @Test func setToOwnBareJIDReplacesTheWholeVCard() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        _ = romeo.request("<iq type='set' id='s1'>\(Self.vCard)</iq>", id: "s1")
        let set = romeo.request("<iq type='set' id='s2' to='romeo@localhost'><vCard xmlns='vcard-temp'><NICKNAME>R</NICKNAME></vCard></iq>", id: "s2")
        #expect(set?[attribute: "type"] == "result")
        let vCard = romeo.request("<iq type='get' id='g'><vCard xmlns='vcard-temp'/></iq>", id: "g")?.child("vCard", namespace: NS.vcard)
        #expect(vCard?.elements.map(\.name) == ["NICKNAME"])
    }

    @Test func aUserWithoutAVCardHasAnEmptyOne() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        let reply = juliet.request("<iq type='get' id='e' to='romeo@localhost'><vCard xmlns='vcard-temp'/></iq>", id: "e")
        #expect(reply?[attribute: "type"] == "result")
        let vCard = try #require(reply?.child("vCard", namespace: NS.vcard))
        #expect(vCard.children.isEmpty)
        let own = romeo.request("<iq type='get' id='o'><vCard xmlns='vcard-temp'/></iq>", id: "o")
        #expect(own?.child("vCard", namespace: NS.vcard)?.children.isEmpty == true)
    }

    @Test func unknownUserIsServiceUnavailable() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        let reply = romeo.request("<iq type='get' id='n' to='nobody@localhost'><vCard xmlns='vcard-temp'/></iq>", id: "n")
        #expect(reply?.errorCondition == "service-unavailable")
        #expect(reply?[attribute: "from"] == "nobody@localhost")
    }

    @Test func settingAnotherUsersVCardIsForbidden() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        let reply = romeo.request("<iq type='set' id='f' to='juliet@localhost'>\(Self.vCard)</iq>", id: "f")
        #expect(reply?.errorCondition == "forbidden")
        let julietsOwn = juliet.request("<iq type='get' id='g'><vCard xmlns='vcard-temp'/></iq>", id: "g")
        #expect(julietsOwn?.child("vCard", namespace: NS.vcard)?.children.isEmpty == true, "nothing was stored")
    }

    @Test func aVCardOverTheLimitIsAPolicyViolation() throws {
        var config = ServerConfig()
        config.limits.maxVCardSize = 1024
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        let photo = String(repeating: "A", count: 1024)
        let reply = romeo.request("<iq type='set' id='big'><vCard xmlns='vcard-temp'><PHOTO><BINVAL>\(photo)</BINVAL></PHOTO></vCard></iq>", id: "big")
        #expect(reply?.errorCondition == "policy-violation")
        #expect(reply?.child("error")?[attribute: "type"] == "modify")
        let stored = romeo.request("<iq type='get' id='g'><vCard xmlns='vcard-temp'/></iq>", id: "g")
        #expect(stored?.child("vCard", namespace: NS.vcard)?.children.isEmpty == true)
    }

    /// XMPPFramework sends photos unresized: a vCard near the 1 MiB stanza
    /// limit is stored and read back whole.
    @Test func anUnresizedPhotoRoundTrips() throws {
        let (_, romeo, juliet) = try romeoAndJuliet()
        let photo = String(repeating: "QUJD", count: 900_000 / 4)
        let set = romeo.request("<iq type='set' id='p'><vCard xmlns='vcard-temp'><PHOTO><TYPE>image/jpeg</TYPE><BINVAL>\(photo)</BINVAL></PHOTO></vCard></iq>", id: "p")
        #expect(set?[attribute: "type"] == "result")
        let reply = juliet.request("<iq type='get' id='g' to='romeo@localhost'><vCard xmlns='vcard-temp'/></iq>", id: "g")
        #expect(reply?.child("vCard", namespace: NS.vcard)?.child("PHOTO", namespace: NS.vcard)?.childText("BINVAL", namespace: NS.vcard) == photo)
    }

    @Test func deletingTheAccountDeletesTheVCard() throws {
        let (server, romeo, _) = try romeoAndJuliet()
        _ = romeo.request("<iq type='set' id='s'>\(Self.vCard)</iq>", id: "s")
        _ = romeo.request("<iq type='set' id='rm'><query xmlns='jabber:iq:register'><remove/></query></iq>", id: "rm")
        try server.addUser("romeo", password: "pw")
        let again = server.connect()
        try again.login("romeo", "pw")
        let vCard = again.request("<iq type='get' id='g'><vCard xmlns='vcard-temp'/></iq>", id: "g")?.child("vCard", namespace: NS.vcard)
        #expect(vCard?.children.isEmpty == true)
    }

    @Test func serverAndAccountAdvertiseVCardTemp() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        for to in ["localhost", "romeo@localhost"] {
            let info = romeo.request("<iq type='get' id='d' to='\(to)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>", id: "d")
            let features = info?.child("query", namespace: NS.discoInfo)?.elements.compactMap { $0[attribute: "var"] } ?? []
            #expect(features.contains(NS.vcard), "\(to)")
        }
    }

    /// XEP-0153: the avatar hash in presence reaches contacts unchanged.
    @Test func avatarHashInPresenceSurvivesBroadcast() throws {
        let (_, romeo, juliet) = try romeoAndJulietAsContacts()
        romeo.send("<presence><x xmlns='vcard-temp:x:update'><photo>01b87fcd030b72895ff8e88db57ec525450f000d</photo></x><c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='n' ver='v'/></presence>")
        let presence = juliet.receiveElements().first { $0.name == "presence" }
        #expect(presence?[attribute: "from"] == "romeo@localhost/orchard")
        #expect(presence?.child("x", namespace: NS.vcardUpdate)?.childText("photo", namespace: NS.vcardUpdate) == "01b87fcd030b72895ff8e88db57ec525450f000d")
        #expect(presence?.child("c", namespace: NS.caps)?[attribute: "ver"] == "v")
    }
}
