import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

extension Element {
    /// The id of this stanza's `<occupant-id/>`s, in order.
    var occupantIDs: [String] {
        elements.filter { $0.name == "occupant-id" && $0.namespace == NS.occupantID }.compactMap { $0[attribute: "id"] }
    }
}

/// XEP-0421 occupant ids on what a room sends from its occupants.
@Suite struct MUCOccupantIDTests {
    @Test func oneIDPerUserAndRoomOnPresenceAndMessages() throws {
        let (server, romeo, juliet) = try romeoAndJuliet()
        for client in [romeo, juliet] {
            client.send("<presence/>")
            _ = client.receiveElements()
        }
        let romeoJoined = romeo.create("garden", as: "romeo").filter { $0.name == "presence" }
        let romeoID = try #require(romeoJoined.first?.occupantIDs.first)
        let julietJoined = juliet.join("garden", as: "juliet").filter { $0.name == "presence" }
        #expect(julietJoined.map(\.occupantIDs.count) == [1, 1])
        #expect(julietJoined.first?.occupantIDs == [romeoID], "romeo's presence as juliet sees it")
        let julietID = try #require(julietJoined.last?.occupantIDs.first)
        #expect(julietID != romeoID)
        #expect(try romeo.receiveOne().occupantIDs == [julietID])
        // The same on messages, after a change of nickname, and from
        // another resource; another in another room.
        juliet.say("hi", in: "garden")
        #expect(try romeo.receiveOne().occupantIDs == [julietID])
        _ = juliet.receiveElements()
        juliet.send("<presence to='\(garden)/jules'/>")
        #expect(romeo.receiveElements().map(\.occupantIDs) == [[julietID], [julietID]])
        _ = juliet.receiveElements()
        let phone = server.connect()
        try phone.login("juliet", "pw", resource: "phone")
        #expect(phone.join("garden", as: "jules").filter { $0.name == "presence" }.last?.occupantIDs == [julietID])
        let elsewhere = juliet.join("tomb", as: "juliet").filter { $0.name == "presence" }
        let tombID = try #require(elsewhere.last?.occupantIDs.first)
        #expect(tombID != julietID)
        // Long enough not to be guessed, and no JID in it.
        #expect(julietID.count >= 16 && !julietID.contains("juliet"))
    }

    @Test func occupantIDsFromClientsAreReplacedByTheRooms() throws {
        let (_, romeo, juliet) = try romeoAndJulietInTheGarden()
        let forged = "<occupant-id xmlns='urn:xmpp:occupant-id:0' id='forged'/>"
        juliet.send("<message to='\(garden)' type='groupchat'><body>hi</body>\(forged)</message>")
        let message = try romeo.receiveOne()
        #expect(message.occupantIDs.count == 1 && !message.occupantIDs.contains("forged"))
        _ = juliet.receiveElements()
        juliet.send("<presence to='\(garden)/juliet'><show>away</show>\(forged)</presence>")
        let presence = try romeo.receiveOne()
        #expect(presence.occupantIDs == message.occupantIDs)
        juliet.send("<message to='\(garden)/romeo' type='chat'><body>psst</body>\(forged)</message>")
        _ = juliet.receiveElements()
        #expect(try romeo.receiveOne().occupantIDs == message.occupantIDs, "a private message's too")
    }
}
