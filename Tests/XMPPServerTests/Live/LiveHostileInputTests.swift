import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

/// Input built to be expensive costs the server time linear in its size:
/// one client's worst stanza does not hold up the others.
@Suite(.timeLimit(.minutes(1)))
struct LiveHostileInputTests {
    /// How long the answer to a hostile stanza, and another client's ping
    /// sent meanwhile, may take. Work quadratic in these inputs takes
    /// minutes; linear work takes milliseconds even in a debug build.
    static let bound = Duration.milliseconds(200)

    /// Nearly 1 MiB (the default stanza limit) of U+0660 ARABIC-INDIC DIGIT ZERO.
    static let digits = String(repeating: "\u{0660}", count: 520_000)

    @Test func aMegabytePasswordOfArabicIndicDigitsIsAnsweredAtOnce() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            try server.register("juliet", "capulet")
            let attacker = try server.loggedInClient("romeo", "montague")
            let bystander = try server.loggedInClient("juliet", "capulet")
            try attacker.send(
                "<iq type='set' id='pw'><query xmlns='jabber:iq:register'>"
                    + "<username>romeo</username><password>\(Self.digits)</password></query></iq>")
            let sent = ContinuousClock.now
            let pong = try bystander.ping()
            #expect(pong[attribute: "type"] == "result")
            #expect(ContinuousClock.now - sent < Self.bound, "another client's ping waited")
            let reply = try attacker.nextElement()
            #expect(reply[attribute: "type"] == "error")
            #expect(reply.child("error")?.child("not-acceptable", namespace: NS.stanzas) != nil)
            #expect(ContinuousClock.now - sent < Self.bound, "the answer took \(ContinuousClock.now - sent)")
        }
    }
}

/// Clients that stop reading are let go: their output is bounded by
/// `max_queued_output`, and their closing connections by `close_timeout`.
@Suite(.timeLimit(.minutes(1)))
struct LiveSlowReaderTests {
    @Test func aClientThatNeverReadsIsDisconnectedAndItsConnectionReleased() throws {
        try LiveServer.run(configure: { config in
            config.limits.maxStanzaSize = 32 << 10
            config.limits.maxQueuedOutput = 64 << 10
            config.timeouts.close = .seconds(1)
        }) { server in
            try server.register("romeo", "montague")
            try server.register("juliet", "capulet")
            let sink = try server.loggedInClient("romeo", "montague", resource: "sink")
            let sender = try server.loggedInClient("juliet", "capulet")
            let body = String(repeating: "x", count: 30_000)
            // The kernel's buffers on both ends take a few MiB before
            // anything queues in the server; send until the server gives up.
            var sent = 0
            while sent < 2000, !server.log.lines.contains(where: { $0.contains("wait for this client to read them") }) {
                try sender.send("<message to='romeo@localhost/sink' type='chat'><body>\(body)</body></message>")
                sent += 1
            }
            try server.waitForLog(containing: "wait for this client to read them")
            try server.waitForLog(containing: "\(sink.socket.localAddress): connection dropped: the peer did not take the last output")
            #expect(try sender.ping()[attribute: "type"] == "result")
        }
    }
}

/// `max_connections`: the connection past it hears why and is closed.
@Suite(.timeLimit(.minutes(1)))
struct LiveConnectionLimitTests {
    @Test func aConnectionPastMaxConnectionsGetsResourceConstraint() throws {
        try LiveServer.run(configure: { $0.limits.maxConnections = 2 }) { server in
            let first = try server.connect()
            try first.openStream()
            let second = try server.connect()
            try second.openStream()
            let third = try server.connect()
            let events = try third.readUntilClosed()
            #expect(events.streamErrorCondition == "resource-constraint")
            try first.close()
            try server.waitForLog(containing: "\(first.socket.localAddress): client closed the stream")
            let fourth = try server.connect()
            #expect(try fourth.openStream().name == "features")
        }
    }

    @Test func anHTTPConnectionPastMaxConnectionsIsClosedAtOnce() throws {
        try LiveServer.run(configure: { $0.limits.maxConnections = 1 }) { server in
            let http = server.server.httpAddresses[0]
            let first = try LiveSocket(connectingTo: http)
            try server.waitForLog(containing: "HTTP on")
            let second = try LiveSocket(connectingTo: http)
            #expect(try second.read(until: .now + .seconds(5)) == nil, "closed without a byte")
            try server.waitForLog(containing: "HTTP connection from \(second.localAddress) refused")
            first.close()
        }
    }
}
