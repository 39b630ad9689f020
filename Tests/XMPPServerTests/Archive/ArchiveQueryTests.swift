import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// XEP-0313 §4 queries with XEP-0059 paging, as clients send them.
@Suite struct ArchiveQueryTests {
    /// Romeo and juliet after romeo sent `count` numbered messages, one a
    /// minute from 2024-01-01T00:00Z; juliet got them.
    private func conversation(_ count: Int) throws -> (TestServer, TestClient, TestClient) {
        let clock = SettableClock()
        let (server, romeo, juliet) = try archiveCouple(clock: clock)
        for number in 1...count {
            romeo.chat("m\(number)", to: "juliet@localhost")
            clock.advance(seconds: 60)
        }
        _ = juliet.receive()
        return (server, romeo, juliet)
    }

    private func bodies(_ range: ClosedRange<Int>) -> [String] { range.map { "m\($0)" } }

    @Test func withMatchesABareJIDsResourcesAndAFullJIDExactly() throws {
        let (server, romeo, juliet) = try archiveCouple()
        let nurse = server.connect()
        try nurse.login("nurse", "pw", resource: "kitchen")
        romeo.chat("from romeo", to: "juliet@localhost")
        nurse.chat("from the nurse", to: "juliet@localhost")
        juliet.chat("to romeo's orchard", to: "romeo@localhost/orchard")
        _ = romeo.receive()
        #expect(juliet.queryArchive().count == 3)
        #expect(juliet.queryArchive([("with", "romeo@localhost")]).bodies == ["from romeo", "to romeo's orchard"])
        #expect(juliet.queryArchive([("with", "romeo@localhost/orchard")]).bodies == ["from romeo", "to romeo's orchard"])
        #expect(juliet.queryArchive([("with", "romeo@localhost/phone")]).bodies.isEmpty)
        #expect(juliet.queryArchive([("with", "nurse@localhost/kitchen")]).bodies == ["from the nurse"])
    }

    @Test func startAndEndSelectATimeRange() throws {
        let (_, _, juliet) = try conversation(5)
        let range = juliet.queryArchive([("start", "2024-01-01T00:01:00Z"), ("end", "2024-01-01T00:03:00.000Z")])
        #expect(range.bodies == bodies(2...4))
        #expect(range.count == 3 && range.complete)
        #expect(juliet.queryArchive([("start", "2024-01-01T01:01:00+01:00")]).bodies == bodies(2...5))
        #expect(juliet.queryArchive([("end", "2023-12-31T23:59:59Z")]).bodies.isEmpty)
    }

    @Test func pagingForwardWithAfterUntilComplete() throws {
        let (_, _, juliet) = try conversation(7)
        let first = juliet.queryArchive(set: "<max>3</max>")
        #expect(first.bodies == bodies(1...3))
        #expect(first.first == first.ids.first && first.last == first.ids.last)
        #expect(first.count == 7 && !first.complete)
        #expect(first.fin?[attribute: "complete"] == nil, "an incomplete page omits the attribute")
        let second = juliet.queryArchive(set: "<max>3</max><after>\(first.last!)</after>")
        #expect(second.bodies == bodies(4...6) && !second.complete)
        let third = juliet.queryArchive(set: "<max>3</max><after>\(second.last!)</after>")
        #expect(third.bodies == ["m7"] && third.complete && third.count == 7)
        let beyond = juliet.queryArchive(set: "<max>3</max><after>\(third.last!)</after>")
        #expect(beyond.results.isEmpty && beyond.complete)
        #expect(beyond.first == nil && beyond.last == nil && beyond.count == 7, "an empty page says only the count")
    }

    @Test func pagingBackwardFromTheEndWithBefore() throws {
        let (_, _, juliet) = try conversation(7)
        let last = juliet.queryArchive(set: "<max>3</max><before/>")
        #expect(last.bodies == bodies(5...7), "the newest page, oldest first")
        #expect(!last.complete)
        let earlier = juliet.queryArchive(set: "<max>3</max><before>\(last.first!)</before>")
        #expect(earlier.bodies == bodies(2...4) && !earlier.complete)
        let earliest = juliet.queryArchive(set: "<max>3</max><before>\(earlier.first!)</before>")
        #expect(earliest.bodies == ["m1"] && earliest.complete)
    }

    @Test func idFieldsAndFlippedPages() throws {
        let (_, _, juliet) = try conversation(6)
        let all = juliet.queryArchive().ids
        let between = juliet.queryArchive([("after-id", all[1]), ("before-id", all[4])])
        #expect(between.bodies == bodies(3...4) && between.count == 2)
        juliet.send("""
            <iq type='set' id='ids'><query xmlns='urn:xmpp:mam:2'><x xmlns='jabber:x:data' type='submit'>\
            <field var='ids'><value>\(all[5])</value><value>\(all[0])</value></field></x></query></iq>
            """)
        let picked = juliet.receiveElements()
        #expect(picked.filter { $0.name == "message" }.count == 2)
        let flipped = juliet.queryArchive(set: "<max>3</max>", extra: "<flip-page/>")
        #expect(flipped.bodies == ["m3", "m2", "m1"])
        #expect(flipped.first == all[0] && flipped.last == all[2], "flipping changes the order sent, not the page")
    }

    @Test func pagesAreCappedAt250() throws {
        let (_, _, juliet) = try conversation(260)
        let page = juliet.queryArchive(set: "<max>1000</max>")
        #expect(page.results.count == 250 && !page.complete && page.count == 260)
        let defaultPage = juliet.queryArchive()
        #expect(defaultPage.results.count == 50)
        let rest = juliet.queryArchive(set: "<max>1000</max><after>\(page.last!)</after>")
        #expect(rest.results.count == 10 && rest.complete)
        let none = juliet.queryArchive(set: "<max>0</max>")
        #expect(none.results.isEmpty && none.count == 260 && !none.complete)
    }

    /// XMPPFramework's query (docs/XMPPFRAMEWORK.md §13): fields built
    /// without `type`, `<max>50</max>`, a UUID queryid, then automatic
    /// paging with `<after/>` until `complete='true'`.
    @Test func xmppFrameworksQueryAndAutomaticPaging() throws {
        let (_, _, juliet) = try conversation(120)
        var received: [String] = []
        var after = ""
        for round in 1...10 {
            let queryID = "8A3B6C1E-\(round)"
            juliet.send("""
                <iq type="set" id="D6F1-\(round)"><query xmlns="urn:xmpp:mam:2" queryid="\(queryID)">\
                <x xmlns="jabber:x:data" type="submit"><field var="FORM_TYPE" type="hidden"><value>urn:xmpp:mam:2</value></field>\
                <field var="with"><value>romeo@localhost</value></field><field var="start"><value>2024-01-01T00:00:00Z</value></field></x>\
                <set xmlns="http://jabber.org/protocol/rsm"><max>50</max>\(after)</set></query></iq>
                """)
            let elements = juliet.receiveElements()
            let results = elements.compactMap { $0.child("result", namespace: NS.mam) }
            #expect(results.allSatisfy { $0[attribute: "queryid"] == queryID })
            received += results.compactMap { $0.child("forwarded", namespace: NS.forward)?.child("message", namespace: NS.client)?.childText("body") }
            let fin = elements.last?.child("fin", namespace: NS.mam)
            #expect(elements.last?[attribute: "id"] == "D6F1-\(round)")
            if fin?[attribute: "complete"] == "true" { break }
            after = "<after>\(fin?.child("set", namespace: NS.rsm)?.childText("last", namespace: NS.rsm) ?? "")</after>"
        }
        #expect(received == bodies(1...120))
    }

    @Test func theFormIsOffered() throws {
        let (_, romeo, _) = try archiveCouple()
        romeo.send("<iq type='get' id='f'><query xmlns='urn:xmpp:mam:2'/></iq>")
        let form = try romeo.receiveOne().child("query", namespace: NS.mam)?.child("x", namespace: NS.dataForms)
        let fields = form?.elements.map { $0[attribute: "var"] ?? "" }
        #expect(fields == ["FORM_TYPE", "with", "start", "end", "before-id", "after-id", "ids"])
        #expect(form?.elements.first?.childText("value") == NS.mam)
    }

    @Test func metadataNamesTheFirstAndLastMessages() throws {
        let (_, romeo, juliet) = try archiveCouple()
        romeo.send("<iq type='get' id='m'><metadata xmlns='urn:xmpp:mam:2'/></iq>")
        #expect(try romeo.receiveOne().child("metadata", namespace: NS.mam)?.elements.isEmpty == true)
        romeo.chat("one", to: "juliet@localhost")
        romeo.chat("two", to: "juliet@localhost")
        _ = juliet.receive()
        let ids = romeo.queryArchive().ids
        romeo.send("<iq type='get' id='m'><metadata xmlns='urn:xmpp:mam:2'/></iq>")
        let metadata = try romeo.receiveOne().child("metadata", namespace: NS.mam)
        #expect(metadata?.child("start")?[attribute: "id"] == ids.first)
        #expect(metadata?.child("end")?[attribute: "id"] == ids.last)
        #expect(metadata?.child("end")?[attribute: "timestamp"] == "2024-01-01T00:00:00.000Z")
    }

    @Test(arguments: [
        ([("start", "yesterday")], "", "bad-request"),
        ([("end", "2024-02-30T00:00:00Z")], "", "bad-request"),
        ([("with", "a@@b")], "", "bad-request"),
        ([("with", "a@b"), ("with", "c@d")], "", "bad-request"),
        ([("{urn:example}full-text", "love")], "", "feature-not-implemented"),
        ([], "<index>2</index>", "feature-not-implemented"),
        ([], "<max>many</max>", "bad-request"),
        ([], "<after>a</after><before>b</before>", "bad-request"),
        ([], "<after>unknown</after>", "item-not-found"),
        ([], "<before>unknown</before>", "item-not-found"),
        ([("after-id", "unknown")], "", "item-not-found"),
        ([("before-id", "unknown")], "", "item-not-found"),
        ([("ids", "unknown")], "", "item-not-found"),
    ])
    func badQueriesAreRefused(fields: [(String, String)], set: String, condition: String) throws {
        let (_, romeo, juliet) = try archiveCouple()
        romeo.chat("hello", to: "juliet@localhost")
        let answer = romeo.queryArchive(fields, set: set)
        #expect(answer.reply[attribute: "type"] == "error")
        #expect(answer.errorCondition == condition)
        #expect(answer.results.isEmpty)
        _ = juliet
    }

    @Test func aForeignFormTypeIsABadRequest() throws {
        let (_, romeo, _) = try archiveCouple()
        romeo.send("""
            <iq type='set' id='q'><query xmlns='urn:xmpp:mam:2'><x xmlns='jabber:x:data' type='submit'>\
            <field var='FORM_TYPE' type='hidden'><value>urn:xmpp:mam:1</value></field></x></query></iq>
            """)
        #expect(try romeo.receiveOne().child("error")?.child("bad-request", namespace: NS.stanzas) != nil)
    }

    @Test func anotherUsersArchiveIsForbidden() throws {
        let (_, romeo, juliet) = try archiveCouple()
        romeo.chat("private", to: "juliet@localhost")
        _ = juliet.receive()
        let answer = romeo.queryArchive(to: "juliet@localhost")
        #expect(answer.errorCondition == "forbidden")
        #expect(answer.results.isEmpty)
        #expect(romeo.queryArchive(to: "romeo@localhost").bodies == ["private"], "one's own bare JID is fine")
        #expect(romeo.queryArchive(to: "localhost").bodies == ["private"], "the domain answers with one's own")
    }
}
