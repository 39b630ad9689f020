import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

/// A persistent room (XEP-0045 `muc#roomconfig_persistentroom`) outlives
/// its occupants and a restart of the real `swiftletd` on the same data
/// directory, with its settings, affiliations, subject and history (from
/// its archive); a temporary one does not.
@Suite(.timeLimit(.minutes(1)))
struct LiveMUCPersistenceTests {
    @Test func aPersistentRoomComesBackAfterARestart() throws {
        let dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-muc-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        try SwiftletdProcess.addUser("romeo", password: "montague", dataDirectory: dataDirectory)
        try SwiftletdProcess.addUser("juliet", password: "capulet", dataDirectory: dataDirectory)
        let room = "lobby@conference.localhost"

        let first = try SwiftletdProcess(dataDirectory: dataDirectory)
        defer { _ = first.kill() }
        let romeo = try first.connectWithTLS()
        try romeo.login("romeo", "montague")
        try romeo.send("<presence to='\(room)/romeo'><x xmlns='http://jabber.org/protocol/muc'/></presence>")
        try romeo.send("<presence to='temporary@conference.localhost/romeo'><x xmlns='http://jabber.org/protocol/muc'/></presence>")
        try romeo.send(
            "<iq type='set' id='c' to='\(room)'><query xmlns='http://jabber.org/protocol/muc#owner'><x xmlns='jabber:x:data' type='submit'><field var='muc#roomconfig_persistentroom'><value>1</value></field><field var='muc#roomconfig_membersonly'><value>1</value></field><field var='muc#roomconfig_roomname'><value>Lobby</value></field></x></query></iq>"
        )
        #expect(try romeo.reply(to: "c")[attribute: "type"] == "result")
        try romeo.send("<message to='\(room)' type='groupchat'><subject>Welcome</subject></message>")
        try romeo.send("<message to='\(room)' type='groupchat'><body>Before the restart</body></message>")
        // The answer comes once the change is stored, and storage writes
        // in order: the subject is stored too.
        try romeo.send(
            "<iq type='set' id='m' to='\(room)'><query xmlns='http://jabber.org/protocol/muc#admin'><item jid='juliet@localhost' affiliation='member'/></query></iq>"
        )
        #expect(try romeo.reply(to: "m")[attribute: "type"] == "result")
        let firstOutput = first.kill()
        romeo.reset()

        let second = try SwiftletdProcess(dataDirectory: dataDirectory)
        defer { _ = second.kill() }
        let juliet = try second.connectWithTLS()
        try juliet.login("juliet", "capulet")
        try juliet.send("<presence to='\(room)/juliet'><x xmlns='http://jabber.org/protocol/muc'/></presence>")
        var own: Element?
        var subject: String?
        var history: [String] = []
        while subject == nil {
            let element = try juliet.nextElement()
            if element.name == "presence", element[attribute: "from"] == "\(room)/juliet" { own = element }
            if element.name == "message", let body = element.childText("body") { history.append(body) }
            if element.name == "message", element.child("body") == nil { subject = element.childText("subject") }
        }
        // The history comes back from the room's archive.
        #expect(history == ["Before the restart"])
        // Juliet is still a member of the members-only room; it needs no
        // configuring again, and it kept its subject and name.
        #expect(own?[attribute: "type"] == nil)
        #expect(own?.child("x", namespace: NS.mucUser)?.child("item", namespace: NS.mucUser)?[attribute: "affiliation"] == "member")
        #expect(subject == "Welcome", "\(firstOutput)\n---\n\(second.kill())")
        try juliet.send(
            "<iq type='get' id='i' to='\(room)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        let info = try juliet.reply(to: "i").child("query", namespace: NS.discoInfo)
        #expect(info?.child("identity", namespace: NS.discoInfo)?[attribute: "name"] == "Lobby")
        let features = info?.elements.compactMap { $0[attribute: "var"] } ?? []
        #expect(features.contains("muc_persistent") && features.contains("muc_membersonly"))
        // The temporary room is gone.
        try juliet.send(
            "<iq type='get' id='t' to='temporary@conference.localhost'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
        #expect(try juliet.reply(to: "t").errorCondition == "item-not-found")
    }
}
