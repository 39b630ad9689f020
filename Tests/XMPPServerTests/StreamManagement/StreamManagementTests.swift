import Testing
import XMPPCore
@testable import XMPPServer
import XMPPTestSupport

/// Romeo (orchard, with stream management on) and Juliet, both available.
func streamManagementCouple(
    config: ServerConfig = ServerConfig(), resume: Bool = true
) throws -> (TestServer, TestClient, TestClient, enabled: Element) {
    let server = try TestServer(config: config)
    try server.addUser("romeo", password: "pw")
    try server.addUser("juliet", password: "pw")
    let romeo = server.connect()
    try romeo.login("romeo", "pw", resource: "orchard")
    romeo.send("<enable xmlns='urn:xmpp:sm:3'\(resume ? " resume='true'" : "")/>")
    let enabled = try romeo.receiveOne()
    romeo.send("<presence/>")
    let juliet = server.connect()
    try juliet.login("juliet", "pw", resource: "balcony")
    juliet.send("<presence/>")
    _ = romeo.receiveElements()
    _ = juliet.receiveElements()
    return (server, romeo, juliet, enabled)
}

/// XEP-0198 on the in-memory server: enabling, counting, acknowledgements,
/// resumption, and what happens to unacknowledged stanzas.
@Suite struct StreamManagementTests {
    private func couple(resume: Bool = true) throws -> (TestServer, TestClient, TestClient, enabled: Element) {
        try streamManagementCouple(resume: resume)
    }

    private func chat(_ text: String, from sender: TestClient, to: String = "romeo@localhost/orchard") {
        sender.send("<message type='chat' to='\(to)' id='\(text)'><body>\(text)</body></message>")
    }

    @Test func featureAfterAuthenticationAndEnabled() throws {
        let server = try TestServer()
        try server.addUser("romeo", password: "pw")
        let client = server.connect()
        let before = try client.openStream()
        #expect(before.child("sm", namespace: NS.sm) == nil)
        let after = try client.authenticate("romeo", "pw")
        #expect(after.child("sm", namespace: NS.sm) != nil)
        client.send("<enable xmlns='urn:xmpp:sm:3'/>")
        #expect(try client.receiveOne().child("unexpected-request", namespace: NS.stanzas) != nil)
        try client.bind("r")
        client.send("<enable xmlns='urn:xmpp:sm:3' resume='true' max='60'/>")
        let enabled = try client.receiveOne()
        #expect(enabled.name == "enabled")
        #expect(enabled[attribute: "resume"] == "true")
        #expect(enabled[attribute: "max"] == "60")
        #expect((enabled[attribute: "id"]?.count ?? 0) >= 16)
        client.send("<enable xmlns='urn:xmpp:sm:3'/>")
        let twice = try client.receiveOne()
        #expect(twice.name == "failed" && twice.child("unexpected-request", namespace: NS.stanzas) != nil)
    }

    @Test func enableWithoutResumeHasNoID() throws {
        let (_, _, _, enabled) = try couple(resume: false)
        #expect(enabled.name == "enabled")
        #expect(enabled[attribute: "id"] == nil && enabled[attribute: "resume"] == nil)
    }

    @Test func countsInboundAndAnswersRequests() throws {
        let (_, romeo, _, _) = try couple()
        // Initial presence was stanza 1.
        romeo.send("<iq type='get' id='p'><ping xmlns='urn:xmpp:ping'/></iq>")
        romeo.send("<r xmlns='urn:xmpp:sm:3'/>")
        let elements = romeo.receiveElements()
        let answer = elements.first { $0.name == "a" }
        #expect(answer?[attribute: "h"] == "2")
    }

    @Test func requestsAcknowledgementAndRefusesTooHighCounts() throws {
        let (server, romeo, juliet, _) = try couple()
        for index in 1...5 { chat("m\(index)", from: juliet) }
        let received = romeo.receiveElements()
        #expect(received.filter { $0.name == "message" }.count == 5)
        #expect(received.contains { $0.name == "r" && $0.namespace == NS.sm })
        // Acknowledging more than was sent is a stream error.
        romeo.send("<a xmlns='urn:xmpp:sm:3' h='99'/>")
        let events = romeo.receive()
        let error = events.compactMap { if case .element(let e) = $0, e.name == "error" { e } else { nil } }.first
        #expect(error?.child("handled-count-too-high", namespace: NS.sm)?[attribute: "send-count"] == "6")
        #expect(romeo.isClosed)
        _ = server
    }

    @Test func unrequestedAcknowledgementIsRequestedAfterADelay() throws {
        let (server, romeo, juliet, _) = try couple()
        chat("one", from: juliet)
        #expect(!romeo.receiveElements().contains { $0.name == "r" })
        server.loop.advance(by: .seconds(2))
        #expect(romeo.receiveElements().contains { $0.name == "r" })
    }

    @Test func resumptionDeliversUnacknowledgedAndQueuedStanzasOnce() throws {
        let (server, romeo, juliet, enabled) = try couple()
        let id = try #require(enabled[attribute: "id"])
        chat("before", from: juliet)
        #expect(romeo.receiveElements().contains { $0.name == "message" })
        // The client says it handled one stanza (Juliet's presence), not "before".
        romeo.session.transportClosed()
        chat("during", from: juliet)
        // Juliet saw no unavailable presence: the session is only detached.
        #expect(!juliet.receiveElements().contains { $0[attribute: "type"] == "unavailable" })

        let again = server.connect()
        try again.openStream()
        try again.authenticate("romeo", "pw")
        again.send("<resume xmlns='urn:xmpp:sm:3' previd='\(id)' h='1'/>")
        let elements = again.receiveElements()
        let resumed = try #require(elements.first)
        #expect(resumed.name == "resumed" && resumed[attribute: "previd"] == id)
        #expect(resumed[attribute: "h"] == "1")
        let bodies = elements.compactMap { $0.name == "message" ? $0.childText("body") : nil }
        #expect(bodies == ["before", "during"])
        // The resumed session is the one routed to, as the same full JID.
        chat("after", from: juliet)
        #expect(again.receiveElements().compactMap { $0.childText("body") } == ["after"])
        let handle = try #require(server.context.sessions.session(try JID("romeo@localhost/orchard")))
        #expect(handle.refers(to: again.session))
        #expect(handle.isAvailable)
    }

    @Test func resumingAnUnknownIDFailsAndBindingStillWorks() throws {
        let (server, _, _, _) = try couple()
        let other = server.connect()
        try other.openStream()
        try other.authenticate("romeo", "pw")
        other.send("<resume xmlns='urn:xmpp:sm:3' previd='nope' h='0'/>")
        let failed = try other.receiveOne()
        #expect(failed.name == "failed" && failed.child("item-not-found", namespace: NS.stanzas) != nil)
        #expect(try other.bind("second").resourcepart == "second")
    }

    @Test func anotherUserCannotResumeTheSession() throws {
        let (server, romeo, _, enabled) = try couple()
        romeo.session.transportClosed()
        let mallory = server.connect()
        try mallory.openStream()
        try mallory.authenticate("juliet", "pw")
        mallory.send("<resume xmlns='urn:xmpp:sm:3' previd='\(enabled[attribute: "id"]!)' h='0'/>")
        #expect(try mallory.receiveOne().name == "failed")
    }

    @Test func notResumedInTimeHandsMessagesToOfflineStorage() throws {
        let (server, romeo, juliet, enabled) = try couple()
        chat("unacked", from: juliet)
        _ = romeo.receiveElements()
        romeo.session.transportClosed()
        chat("queued", from: juliet)
        server.loop.advance(by: .seconds(301))
        // Now the session is gone, and resuming fails.
        #expect(server.context.sessions.session(try JID("romeo@localhost/orchard")) == nil)
        let late = server.connect()
        try late.openStream()
        try late.authenticate("romeo", "pw")
        late.send("<resume xmlns='urn:xmpp:sm:3' previd='\(enabled[attribute: "id"]!)' h='0'/>")
        #expect(try late.receiveOne().name == "failed")
        try late.bind("orchard")
        late.send("<presence/>")
        let bodies = late.receiveElements().compactMap { $0.name == "message" ? $0.childText("body") : nil }
        #expect(bodies == ["unacked", "queued"])
    }

    @Test func acknowledgedStanzasAreNotHandedOn() throws {
        let (server, romeo, juliet, _) = try couple(resume: false)
        chat("seen", from: juliet)
        chat("unseen", from: juliet)
        _ = romeo.receiveElements()
        // Presence from Juliet, "seen": two handled.
        romeo.send("<a xmlns='urn:xmpp:sm:3' h='2'/>")
        romeo.session.transportClosed()
        let next = server.connect()
        try next.login("romeo", "pw", resource: "orchard")
        next.send("<presence/>")
        let bodies = next.receiveElements().compactMap { $0.name == "message" ? $0.childText("body") : nil }
        #expect(bodies == ["unseen"])
    }

    @Test func unacknowledgedRequestGetsAnErrorForItsSender() throws {
        let (_, romeo, juliet, _) = try couple(resume: false)
        juliet.send("<iq type='get' id='v' to='romeo@localhost/orchard'><query xmlns='jabber:iq:version'/></iq>")
        #expect(romeo.receiveElements().contains { $0.name == "iq" })
        romeo.session.transportClosed()
        let reply = juliet.receiveElements().first { $0[attribute: "id"] == "v" }
        #expect(reply?[attribute: "type"] == "error")
        #expect(reply?.child("error")?.child("service-unavailable", namespace: NS.stanzas) != nil)
    }
}

/// The counters alone, including their 32-bit wrap-around.
@Suite struct StreamManagementStateTests {
    @Test func acknowledgesAcrossTheWrap() throws {
        var state = StreamManagementState<String>(acknowledgedOutbound: UInt32.max - 1)
        for index in 0..<4 { state.recordSent("\(index)", byteCount: 10) }
        #expect(state.sentOutbound == 2)
        #expect(try state.acknowledge(0) == 2)
        #expect(state.unacknowledged == ["2", "3"])
        #expect(state.unacknowledgedByteCount == 20)
        #expect(throws: StreamManagementCountTooHigh.self) { try state.acknowledge(3) }
        #expect(try state.acknowledge(2) == 2)
        #expect(state.unacknowledged.isEmpty)
        #expect(try state.acknowledge(2) == 0)
    }

    @Test func inboundCountWraps() {
        var state = StreamManagementState<String>(handledInbound: UInt32.max)
        state.handledInbound &+= 1
        #expect(state.handledInbound == 0)
    }
}
