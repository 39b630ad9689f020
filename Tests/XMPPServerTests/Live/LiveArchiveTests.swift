import Testing
import XMPPCore
import XMPPTestSupport

/// The archive on the real storage thread: writes are batched after
/// delivery, yet a query sees every message routed before it.
@Suite(.timeLimit(.minutes(1)))
struct LiveArchiveTests {
    @Test func aQueryRightAfterAFloodSeesEveryMessageInOrder() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            try server.register("juliet", "capulet")
            let juliet = try server.loggedInClient("juliet", "capulet")
            try juliet.send("<presence/>")
            _ = try juliet.nextElement()
            let romeo = try server.loggedInClient("romeo", "montague")
            let count = 200
            // The flood and the query in one write: the query reaches the
            // storage thread while the archive writes are still batched.
            let flood = (1...count).map { "<message to='juliet@localhost' type='chat'><body>n\($0)</body></message>" }
            try romeo.send(flood.joined() + "<iq type='set' id='q'><query xmlns='urn:xmpp:mam:2' queryid='all'>"
                + "<set xmlns='http://jabber.org/protocol/rsm'><max>250</max></set></query></iq>")
            let (results, fin) = try romeo.elements(upTo: "q")
            let bodies = results.compactMap {
                $0.child("result", namespace: NS.mam)?.child("forwarded", namespace: NS.forward)?
                    .child("message", namespace: NS.client)?.childText("body")
            }
            #expect(bodies == (1...count).map { "n\($0)" })
            #expect(fin.child("fin", namespace: NS.mam)?[attribute: "complete"] == "true", "\(fin.xml)")

            // Juliet's copies carry the ids her archive knows them by.
            var delivered: [String] = []
            for _ in 1...count {
                let message = try juliet.nextElement()
                delivered.append(message.child("stanza-id", namespace: NS.stanzaID)?[attribute: "id"] ?? "none")
            }
            try juliet.send("<iq type='set' id='j'><query xmlns='urn:xmpp:mam:2'>"
                + "<set xmlns='http://jabber.org/protocol/rsm'><max>250</max></set></query></iq>")
            let ids = try juliet.elements(upTo: "j").before.compactMap {
                $0.child("result", namespace: NS.mam)?[attribute: "id"]
            }
            #expect(ids == delivered)
        }
    }
}
