import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

extension TestClient {
    /// Asks the garden to retract the message `id`, as a moderator would,
    /// and returns everything that came back.
    func moderate(_ id: String, reason: String = "spam", namespace: String = NS.messageModerate) -> [Element] {
        send(
            "<iq type='set' to='\(garden)' id='mod'><moderate id='\(id)' xmlns='\(namespace)'>"
                + "<retract xmlns='urn:xmpp:message-retract:1'/><reason>\(reason)</reason></moderate></iq>")
        return receiveElements()
    }
}

/// XEP-0425 moderation in rooms.
@Suite struct MUCModerationTests {
    /// The garden after juliet said "rude"; returns its stanza id.
    private func rudeJuliet() throws -> (TestServer, TestClient, TestClient, String) {
        let (server, romeo, juliet) = try romeoAndJulietInTheGarden()
        juliet.say("rude", in: "garden")
        _ = juliet.receiveElements()
        let id = try #require(try romeo.receiveOne().child("stanza-id", namespace: NS.stanzaID)?[attribute: "id"])
        return (server, romeo, juliet, id)
    }

    @Test func aModeratorRetractsAMessageForEveryoneAndTheArchiveKeepsATombstone() throws {
        let (server, romeo, juliet, id) = try rudeJuliet()
        let got = romeo.moderate(id)
        #expect(got.first { $0.name == "iq" }?[attribute: "type"] == "result")
        let romeoID = try #require(romeo.join("garden", as: "romeo").last { $0.name == "presence" }?.occupantIDs.first)
        for announcement in [got.first { $0.name == "message" }, juliet.receiveElements().first] {
            let retract = announcement?.child("retract", namespace: NS.messageRetract)
            #expect(announcement?[attribute: "from"] == garden)
            #expect(announcement?[attribute: "type"] == "groupchat")
            #expect(retract?[attribute: "id"] == id)
            let moderated = retract?.child("moderated", namespace: NS.messageModerate)
            #expect(moderated?[attribute: "by"] == "\(garden)/romeo")
            #expect(moderated?.child("occupant-id", namespace: NS.occupantID)?[attribute: "id"] == romeoID)
            #expect(retract?.childText("reason", namespace: NS.messageModerate) == "spam")
        }
        // The archive: a tombstone where the message was, then the announcement.
        let answer = juliet.queryGarden()
        #expect(answer.ids.first == id && answer.results.count == 2)
        let tombstone = try #require(answer.results.first.flatMap(answer.forwarded))
        #expect(tombstone.child("body") == nil)
        #expect(tombstone[attribute: "from"] == "\(garden)/juliet")
        let retracted = tombstone.child("retracted", namespace: NS.messageRetract)
        #expect(retracted?[attribute: "stamp"] != nil)
        #expect(retracted?.child("moderated", namespace: NS.messageModerate)?[attribute: "by"] == "\(garden)/romeo")
        #expect(answer.results.last.flatMap(answer.forwarded)?.child("retract", namespace: NS.messageRetract) != nil)
        // The history too (the announcement is not history).
        let phone = server.connect()
        try phone.login("juliet", "pw", resource: "phone")
        let history = phone.join("garden", as: "juliet").filter { $0.child("stanza-id", namespace: NS.stanzaID) != nil }
        #expect(history.count == 1)
        #expect(history.first?.child("body") == nil)
        #expect(history.first?.child("retracted", namespace: NS.messageRetract) != nil)
    }

    @Test func onlyModeratorsRetractAndOnlyMessagesTheRoomKept() throws {
        let (_, romeo, juliet, id) = try rudeJuliet()
        let refused = juliet.moderate(id)
        #expect(refused.count == 1 && refused.first?.errorCondition == "forbidden")
        #expect(romeo.receiveElements().isEmpty)
        #expect(romeo.moderate("aaaaaaaaaaaaa").first?.errorCondition == "item-not-found")
        #expect(romeo.moderate("not an id").first?.errorCondition == "item-not-found")
        // A message of another room is not this room's to retract.
        _ = romeo.join("tomb", as: "romeo")
        romeo.send("<message to='tomb@\(conference)' type='groupchat'><body>elsewhere</body></message>")
        let other = try #require(try romeo.receiveOne().child("stanza-id", namespace: NS.stanzaID)?[attribute: "id"])
        #expect(romeo.moderate(other).first?.errorCondition == "item-not-found")
        // The older form is not supported.
        romeo.send(
            "<iq type='set' to='\(garden)' id='old'><apply-to xmlns='urn:xmpp:fasten:0' id='\(id)'>"
                + "<moderate xmlns='urn:xmpp:message-moderate:0'><retract xmlns='urn:xmpp:message-retract:0'/>"
                + "</moderate></apply-to></iq>")
        #expect(try romeo.receiveOne().errorCondition == "feature-not-implemented")
        #expect(juliet.receiveElements().isEmpty)
        #expect(juliet.queryGarden().bodies == ["rude"])
    }
}
