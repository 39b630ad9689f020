import Testing
import XMPPCore
@testable import XMPPServer

/// The capabilities PEP keeps per resource and its bounded cache of
/// verified `ver`s.
@Suite struct EntityCapsTrackerTests {
    private func info(_ caps: TestCaps) -> Element {
        let parser = XMLStreamParser()
        _ = parser.feed("<stream xmlns='jabber:client'>")
        guard case .element(let element)? = parser.feed(caps.info).first else { fatalError("bad disco#info") }
        return element
    }

    private func entity(_ caps: TestCaps) -> EntityCapabilities {
        EntityCapabilities(hash: "sha-1", node: TestCaps.node, ver: caps.ver)
    }

    /// Announces `caps` for `jid` and answers the query; the change reported.
    private func learn(_ caps: TestCaps, for jid: JID, in tracker: EntityCapsTracker) -> EntityCapsTracker.Change? {
        guard case .query = tracker.presence(entity(caps), of: jid) else { return nil }
        return tracker.answer(from: jid, to: jid.bare, info: info(caps))?.change
    }

    @Test func theOldestVerifiedVerLeavesAFullCache() throws {
        let tracker = EntityCapsTracker(capacity: 1)
        let (a, b) = (TestCaps(notify: ["a"]), TestCaps(notify: ["b"]))
        let first = try JID("juliet@localhost/one"), second = try JID("juliet@localhost/two")
        #expect(learn(a, for: first, in: tracker) == .init(before: [], after: ["a"]))
        #expect(tracker.presence(entity(a), of: second) == .changed(.init(before: [], after: ["a"])), "cached")
        #expect(learn(b, for: first, in: tracker) == .init(before: ["a"], after: ["b"]))
        tracker.remove(second)
        guard case .query = tracker.presence(entity(a), of: second) else {
            Issue.record("a's ver was evicted and must be asked for again")
            return
        }
    }

    @Test func goingUnavailableForgetsTheResourceAndItsQuery() throws {
        let tracker = EntityCapsTracker()
        let jid = try JID("juliet@localhost/one")
        let caps = TestCaps(notify: ["a"])
        guard case .query = tracker.presence(entity(caps), of: jid) else {
            Issue.record("an unknown ver is asked for")
            return
        }
        tracker.remove(jid)
        #expect(tracker.answer(from: jid, to: jid.bare, info: info(caps)) == nil)
        #expect(tracker.interests(of: jid).isEmpty)
        #expect(tracker.presence(nil, of: jid) == .changed(.init(before: [], after: [])))
        #expect(tracker.presence(nil, of: jid) == .unchanged)
    }

    @Test func anAnswerAboutAnotherNodeLeavesTheQueryPending() throws {
        let tracker = EntityCapsTracker()
        let jid = try JID("juliet@localhost/one")
        let (old, new) = (TestCaps(notify: ["a"]), TestCaps(notify: ["b"]))
        _ = tracker.presence(entity(old), of: jid)
        guard case .query(let asked) = tracker.presence(entity(new), of: jid) else {
            Issue.record("an unknown ver is asked for")
            return
        }
        var stale = info(old)
        stale[attribute: "node"] = TestCaps.node + "#" + old.ver
        #expect(tracker.answer(from: jid, to: jid.bare, info: stale) == nil, "the answer to a replaced query")
        var current = info(new)
        current[attribute: "node"] = asked.discoNode
        #expect(tracker.answer(from: jid, to: jid.bare, info: current)?.change == .init(before: [], after: ["b"]))
    }

    @Test func eachServiceThatAskedGetsTheAnswerTheFirstOneTellsTheInterests() throws {
        let tracker = EntityCapsTracker()
        let jid = try JID("juliet@localhost/one")
        let romeo = try JID("romeo@localhost"), nurse = try JID("nurse@localhost")
        let caps = TestCaps(notify: ["a"])
        _ = tracker.presence(entity(caps), of: jid)
        #expect(tracker.ask(romeo, about: entity(caps), of: jid))
        #expect(tracker.answer(from: jid, to: nurse, info: info(caps)) == nil, "the nurse asked nothing")
        let first = tracker.answer(from: jid, to: romeo, info: info(caps))
        #expect(first == .init(change: .init(before: [], after: ["a"]), added: ["a"], awaiting: [jid.bare]))
        #expect(tracker.answer(from: jid, to: jid.bare, info: info(caps)) == .init(change: nil, added: ["a"], awaiting: []))
        #expect(tracker.answer(from: jid, to: jid.bare, info: info(caps)) == nil, "answered once")
        #expect(tracker.ask(nurse, about: entity(caps), of: jid) == false, "known by now: no need to ask")
    }
}
