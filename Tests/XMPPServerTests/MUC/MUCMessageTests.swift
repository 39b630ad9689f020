import XMPPCore
import XMPPServer
import XMPPTestSupport
import Testing

/// Messages in a room (XEP-0045 §7.4, §7.5, §8.1).
@Suite struct MUCMessageTests {
    @Test func aGroupchatMessageReachesEveryOccupantFromTheSendersNick() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        romeo.say("hello", in: "garden")
        for (client, jid) in [(romeo, "romeo@localhost/orchard"), (juliet, "juliet@localhost/balcony")] {
            let message = try client.receiveOne()
            #expect(message[attribute: "from"] == "garden@\(conference)/romeo")
            #expect(message[attribute: "to"] == jid)
            #expect(message[attribute: "type"] == "groupchat")
            #expect(message[attribute: "id"] == "hello")
            #expect(message.childText("body") == "hello")
            #expect(message.child("delay", namespace: NS.delay) == nil)
        }
    }

    @Test func someoneOutsideTheRoomMayNotSendToIt() throws {
        let (server, romeo, _) = try romeoAndJulietInTheGarden()
        try server.addUser("mercutio", password: "pw")
        let mercutio = server.connect()
        try mercutio.login("mercutio", "pw", resource: "street")
        mercutio.say("a plague", in: "garden")
        let error = try mercutio.receiveOne()
        #expect(error[attribute: "type"] == "error")
        #expect(error.errorCondition == "not-acceptable")
        #expect(romeo.receiveElements().isEmpty)
        // A room that does not exist is not found; private messages to
        // an occupant are for occupants.
        mercutio.say("hello", in: "nowhere")
        #expect(try mercutio.receiveOne().errorCondition == "item-not-found")
        mercutio.send("<message to='garden@\(conference)/romeo' type='chat'><body>psst</body></message>")
        #expect(try mercutio.receiveOne().errorCondition == "not-acceptable")
        #expect(romeo.receiveElements().isEmpty)
    }

    @Test func aPrivateMessageGoesToTheOccupantFromTheSendersNick() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send("<message to='garden@\(conference)/romeo' type='chat' id='pm'><body>psst</body></message>")
        let message = try romeo.receiveOne()
        #expect(message[attribute: "from"] == "garden@\(conference)/juliet")
        #expect(message[attribute: "to"] == "romeo@localhost/orchard")
        #expect(message.childText("body") == "psst")
        #expect(message.child("x", namespace: NS.mucUser) != nil)
        #expect(juliet.receiveElements().isEmpty)
        // To no one, or of type groupchat: refused.
        juliet.send("<message to='garden@\(conference)/tybalt' type='chat'><body>psst</body></message>")
        #expect(try juliet.receiveOne().errorCondition == "item-not-found")
        juliet.send("<message to='garden@\(conference)/romeo' type='groupchat'><body>psst</body></message>")
        #expect(try juliet.receiveOne().errorCondition == "bad-request")
    }

    @Test func anOccupantChangesTheSubject() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        // Only moderators may, until the owner lets participants (§8.1).
        juliet.send("<message to='garden@\(conference)' type='groupchat'><subject>Hate</subject></message>")
        #expect(try juliet.receiveOne().errorCondition == "forbidden")
        #expect(romeo.receiveElements().isEmpty)
        let allowed = romeo.request(
            "<iq type='set' id='c' to='garden@\(conference)'><query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'><field var='muc#roomconfig_changesubject'><value>1</value></field></x></query></iq>",
            id: "c")
        #expect(allowed?[attribute: "type"] == "result")
        #expect(juliet.receiveElements().first?.mucStatuses == ["104"])
        juliet.send("<message to='garden@\(conference)' type='groupchat'><subject>Love</subject></message>")
        for client in [romeo, juliet] {
            let message = try client.receiveOne()
            #expect(message[attribute: "from"] == "garden@\(conference)/juliet")
            #expect(message.childText("subject") == "Love")
        }
        // A newcomer gets it last, and not as history.
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        let got = phone.join("garden", as: "romeo")
        #expect(got.last?.childText("subject") == "Love")
        #expect(got.last?[attribute: "from"] == "garden@\(conference)/juliet")
        #expect(got.filter { $0.name == "message" }.count == 1)
    }

    @Test func chatStatesAreNotHistory() throws {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send(
            "<message to='garden@\(conference)' type='groupchat'><composing xmlns='http://jabber.org/protocol/chatstates'/></message>"
        )
        #expect(romeo.receiveElements().count == 1)
        let phone = server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        #expect(phone.join("garden", as: "romeo").filter { $0.name == "message" }.count == 1)
    }
}

/// What only the room may say is taken out of what occupants send.
@Suite struct MUCForgeryTests {
    @Test func occupantsCannotSpeakForTheRoom() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let forged =
            "<x xmlns='http://jabber.org/protocol/muc#user'><status code='104'/></x>"
            + "<delay xmlns='urn:xmpp:delay' from='garden@\(conference)' stamp='2001-01-01T00:00:00Z'/>"
            + "<stanza-id xmlns='urn:xmpp:sid:0' by='garden@\(conference)' id='fake'/>"
            + "<delay xmlns='urn:xmpp:delay' stamp='2020-01-01T00:00:00Z'/>"
        romeo.send("<message to='garden@\(conference)' type='groupchat'><body>hi</body>\(forged)</message>")
        let got = try #require(juliet.receiveElements().first { $0.name == "message" })
        #expect(got.child("x", namespace: NS.mucUser) == nil)
        let stanzaIDs = got.elements.filter { $0.name == "stanza-id" && $0.namespace == NS.stanzaID }
        #expect(stanzaIDs.count == 1 && stanzaIDs.first?[attribute: "id"] != "fake", "only the room's own")
        #expect(got.elements.filter { $0.name == "delay" }.map { $0[attribute: "from"] } == [nil], "the client's own delay stays")
        _ = romeo.receiveElements()
        romeo.send(
            "<message to='garden@\(conference)/juliet' type='chat'><body>psst</body>"
                + "<x xmlns='http://jabber.org/protocol/muc#user'><invite from='admin@localhost'/></x></message>")
        let whispered = try #require(juliet.receiveElements().first { $0.name == "message" })
        let marks = whispered.elements.filter { $0.name == "x" && $0.namespace == NS.mucUser }
        #expect(marks.count == 1 && marks.first?.elements.isEmpty == true, "\(whispered.xml)")
    }
}

/// `muc_max_stanza_size` bounds what rooms keep and fan out.
@Suite struct MUCSizeTests {
    @Test func aStanzaOverTheRoomLimitIsNotAcceptable() throws {
        let config = try ServerConfig.parse("muc_max_stanza_size = 1KiB", fileName: "test")
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden(config: config)
        let long = String(repeating: "x", count: 2000)
        romeo.send("<message to='garden@\(conference)' type='groupchat'><body>\(long)</body></message>")
        #expect(romeo.receiveElements().first?.errorCondition == "not-acceptable")
        #expect(juliet.receiveElements().isEmpty)
        romeo.send("<presence to='garden@\(conference)/romeo'><status>\(long)</status></presence>")
        #expect(romeo.receiveElements().first?.errorCondition == "not-acceptable")
        romeo.say("short", in: "garden")
        #expect(juliet.receiveElements().count == 1)
    }

    @Test func blockingAppliesToPrivateMessagesThroughTheRoom() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let blocked = romeo.request(
            "<iq type='set' id='b'><block xmlns='urn:xmpp:blocking'><item jid='juliet@localhost'/></block></iq>", id: "b")
        #expect(blocked?[attribute: "type"] == "result")
        juliet.send("<message to='garden@\(conference)/romeo' type='chat'><body>psst</body></message>")
        #expect(try juliet.receiveOne().errorCondition == "service-unavailable")
        romeo.send("<message to='garden@\(conference)/juliet' type='chat'><body>psst</body></message>")
        let refused = try romeo.receiveOne()
        #expect(refused.errorCondition == "not-acceptable")
        #expect(refused.child("error")?.child("blocked", namespace: NS.blockingErrors) != nil)
        #expect(juliet.receiveElements().isEmpty)
    }

    @Test func aRejoinShowsItsNewPresence() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.send(
            "<presence to='garden@\(conference)/juliet'><show>away</show><x xmlns='http://jabber.org/protocol/muc'/></presence>")
        _ = juliet.receiveElements()
        let told = romeo.receiveElements()
        #expect(told.count == 1)
        #expect(told.first?.childText("show") == "away")
    }

    @Test func anOccupantsVCardComesFromItsRoomAddress() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let set = juliet.request(
            "<iq type='set' id='s'><vCard xmlns='vcard-temp'><FN>Juliet Capulet</FN></vCard></iq>", id: "s")
        #expect(set?[attribute: "type"] == "result")
        let got = romeo.request("<iq type='get' id='v' to='garden@\(conference)/juliet'><vCard xmlns='vcard-temp'/></iq>", id: "v")
        #expect(got?[attribute: "from"] == "garden@\(conference)/juliet")
        #expect(got?.child("vCard", namespace: NS.vcard)?.childText("FN") == "Juliet Capulet")
        // Juliet does not see real JIDs: of romeo's vCard, she gets the
        // photo alone.
        _ = romeo.request(
            "<iq type='set' id='s'><vCard xmlns='vcard-temp'><FN>Romeo Montague</FN><PHOTO><TYPE>image/png</TYPE><BINVAL>AAAA</BINVAL></PHOTO></vCard></iq>",
            id: "s")
        _ = juliet.receiveElements()
        let hidden = juliet.request("<iq type='get' id='w' to='garden@\(conference)/romeo'><vCard xmlns='vcard-temp'/></iq>", id: "w")
        #expect(hidden?.child("vCard", namespace: NS.vcard)?.elements.map(\.name) == ["PHOTO"])
    }
}
