import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// Lists a client sends in one stanza (roster groups, archive preference
/// JIDs) and lists it builds over time (roster items) are bounded, each
/// with a clear error; limits are checked while reading, and duplicates
/// are found with sets, so a long list costs linear time.
@Suite struct ClientListLimitsTests {
    private static func rosterSet(_ item: String) -> String {
        "<iq type='set' id='x'><query xmlns='jabber:iq:roster'>\(item)</query></iq>"
    }

    @Test func aRosterItemInMoreGroupsThanTheLimitIsAPolicyViolation() throws {
        var config = ServerConfig()
        config.limits.rosterMaxGroups = 3
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        let groups = (1...20_000).map { "<group>g\($0)</group>" }.joined()
        romeo.send(Self.rosterSet("<item jid='a@localhost'>\(groups)</item>"))
        let reply = try romeo.receiveOne()
        #expect(reply.errorCondition == "policy-violation")
        #expect(reply.child("error")?.childText("text", namespace: NS.stanzas) == "at most 3 groups per roster item")

        romeo.send(Self.rosterSet("<item jid='a@localhost'><group>1</group><group>2</group><group>3</group></item>"))
        #expect(romeo.receiveElements().contains { $0[attribute: "id"] == "x" && $0[attribute: "type"] == "result" })
    }

    @Test func aGroupNamedTwiceIsABadRequestWhereverTheRepeatIs() throws {
        let (_, romeo, _) = try romeoAndJuliet()
        romeo.send(Self.rosterSet("<item jid='a@localhost'><group>a</group><group>b</group><group>a</group></item>"))
        #expect(try romeo.receiveOne().errorCondition == "bad-request")
    }

    @Test func addingARosterItemBeyondTheLimitIsAPolicyViolationButUpdatesStillWork() throws {
        var config = ServerConfig()
        config.limits.rosterMaxItems = 2
        let (_, romeo, _) = try romeoAndJuliet(config: config)
        for contact in ["a", "b"] {
            romeo.send(Self.rosterSet("<item jid='\(contact)@localhost'/>"))
            #expect(try romeo.receiveOne()[attribute: "type"] == "result")
        }
        romeo.send(Self.rosterSet("<item jid='c@localhost'/>"))
        let refused = try romeo.receiveOne()
        #expect(refused.errorCondition == "policy-violation")
        #expect(refused.child("error")?.childText("text", namespace: NS.stanzas) == "at most 2 roster items")
        romeo.send(Self.rosterSet("<item jid='a@localhost' name='A'/>"))
        #expect(romeo.receiveElements().contains { $0[attribute: "type"] == "result" })
    }

    @Test func archivePreferencesBeyond1000JIDsAreNotAcceptableAndRepeatsCountOnce() throws {
        let (_, romeo, _) = try archiveCouple()
        let many = (1...20_000).map { "<jid>u\($0)@localhost</jid>" }.joined()
        romeo.send("<iq type='set' id='p'><prefs xmlns='urn:xmpp:mam:2' default='always'><always>\(many)</always></prefs></iq>")
        let refused = try romeo.receiveOne()
        #expect(refused.errorCondition == "not-acceptable")
        let repeated = String(repeating: "<jid>juliet@localhost</jid>", count: 5000)
        romeo.send("<iq type='set' id='q'><prefs xmlns='urn:xmpp:mam:2' default='always'><never>\(repeated)</never></prefs></iq>")
        let kept = try romeo.receiveOne().child("prefs", namespace: NS.mam)?.child("never", namespace: NS.mam)
        #expect(kept?.elements.map(\.text) == ["juliet@localhost"])
    }
}

/// RFC 6121 §4.6: the entities a resource sent directed presence to are
/// remembered, at most `max_directed_presence` of them.
@Suite struct DirectedPresenceLimitTests {
    @Test func directedPresenceBeyondTheLimitIsAPolicyViolation() throws {
        var config = ServerConfig()
        config.limits.maxDirectedPresence = 2
        let (_, romeo, juliet) = try romeoAndJuliet(config: config)
        romeo.send("<presence to='juliet@localhost/balcony'/>")
        romeo.send("<presence to='nurse@localhost'/>")
        romeo.send("<presence to='juliet@localhost/balcony'><show>away</show></presence>")  // already known
        #expect(!romeo.receiveElements().contains { $0[attribute: "type"] == "error" })
        romeo.send("<presence to='tybalt@localhost' id='third'/>")
        let refused = romeo.receiveElements().first { $0[attribute: "id"] == "third" }
        #expect(refused?[attribute: "type"] == "error")
        #expect(refused?.errorCondition == "policy-violation")
        // Going unavailable to one makes room for another.
        romeo.send("<presence to='nurse@localhost' type='unavailable'/>")
        romeo.send("<presence to='tybalt@localhost' id='again'/>")
        #expect(!romeo.receiveElements().contains { $0[attribute: "id"] == "again" && $0[attribute: "type"] == "error" })
        _ = juliet
    }
}
