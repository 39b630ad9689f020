import Testing
import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A client that does not read what it is sent cannot make the server
/// queue output without bound: past `max_queued_output` its stream ends
/// with `resource-constraint`, and everyone else is still served.
@Suite struct QueuedOutputLimitTests {
    /// 64 KiB of output may wait; stanzas are at most 16 KiB.
    static let config = {
        var config = ServerConfig()
        config.limits.maxStanzaSizeUnauthenticated = 16 << 10
        config.limits.maxStanzaSize = 16 << 10
        config.limits.maxQueuedOutput = 64 << 10
        return config
    }()

    @Test func aClientThatDoesNotReadIsDisconnectedWithResourceConstraint() throws {
        let (server, romeo, juliet) = try romeoAndJuliet(config: Self.config)
        let body = String(repeating: "x", count: 4000)
        // Romeo never reads: 40 messages of 4 KB pile up in his transport.
        for number in 1...40 {
            juliet.send("<message to='romeo@localhost/orchard' type='chat' id='m\(number)'><body>\(body)</body></message>")
        }
        #expect(romeo.isClosed)
        let events = romeo.receive()
        #expect(events.streamErrorCondition == "resource-constraint")
        #expect(server.logLines.lines.contains { $0.contains("more than 65536 bytes wait for this client to read them") })

        juliet.send("<iq type='get' id='still'><ping xmlns='urn:xmpp:ping'/></iq>")
        #expect(juliet.receiveElements().contains { $0[attribute: "id"] == "still" && $0[attribute: "type"] == "result" })
    }

    @Test func aClientThatReadsIsNeverCutOff() throws {
        let (_, romeo, juliet) = try romeoAndJuliet(config: Self.config)
        let body = String(repeating: "x", count: 4000)
        var received = 0
        for number in 1...40 {
            juliet.send("<message to='romeo@localhost/orchard' type='chat' id='m\(number)'><body>\(body)</body></message>")
            received += romeo.receiveElements().count { $0.name == "message" }
        }
        #expect(received == 40)
        #expect(!romeo.isClosed)
    }
}
