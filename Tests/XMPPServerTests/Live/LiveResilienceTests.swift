import Testing
import XMPPCore
import XMPPTestSupport

/// A real server under misbehaving or departing clients: abrupt resets,
/// garbage, shutdown, and two sessions for one full JID (RFC 6120 §4.9,
/// §7.7.2.2).
@Suite(.timeLimit(.minutes(1)))
struct LiveResilienceTests {
    /// Where a client vanishes during negotiation.
    enum NegotiationStage: String, CaseIterable, CustomTestStringConvertible {
        /// Half of a stream header sent.
        case header
        /// The ClientHello sent after `<proceed/>`, no more.
        case tlsHandshake
        /// SCRAM's challenge received, no response sent.
        case scramExchange

        var testDescription: String { rawValue }
    }

    @Test(arguments: NegotiationStage.allCases)
    func aResetMidNegotiationLeavesTheServerServingOthers(_ stage: NegotiationStage) throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let leaver = try server.connect()
            switch stage {
            case .header:
                try leaver.send("<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http")
            case .tlsHandshake:
                try leaver.openStream()
                try leaver.send("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
                #expect(try leaver.nextElement().name == "proceed")
                let context = try TLSContext(configuration: .client(verification: .insecureAcceptAny))
                try leaver.socket.write(TLSSession(context: context).takeOutput())  // the ClientHello
            case .scramExchange:
                try leaver.openStream()
                try leaver.startTLS(trusting: server.certificatePEM)
                let scram = try SCRAMClient(mechanism: .scramSHA256, username: "romeo", secret: .password("montague"))
                try leaver.send(
                    "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='SCRAM-SHA-256'>"
                        + SASLPayload.encode(scram.clientFirstMessage) + "</auth>")
                #expect(try leaver.nextElement().name == "challenge")
            }
            let leaverAddress = leaver.socket.localAddress
            leaver.reset()
            try server.waitForLog(containing: "\(leaverAddress): disconnected")

            let other = try server.loggedInClient("romeo", "montague")
            #expect(try other.ping()[attribute: "type"] == "result")
        }
    }

    @Test func aResetMidSessionLeavesTheServerServingOthers() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let leaver = try server.loggedInClient("romeo", "montague", resource: "balcony")
            try leaver.send("<message to='juliet@localhost' type='chat'><bo")  // half a stanza
            let leaverAddress = leaver.socket.localAddress
            leaver.reset()
            try server.waitForLog(containing: "\(leaverAddress): disconnected")

            // The same full JID binds as new: the old session is gone, so
            // nothing is replaced.
            let other = try server.loggedInClient("romeo", "montague", resource: "balcony")
            #expect(try other.ping()[attribute: "type"] == "result")
            #expect(!server.log.lines.contains { $0.contains("replacing the earlier session") })
        }
    }

    @Test(arguments: [
        ("an HTTP request instead of a stream", false, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"),
        ("mismatched tags after the header", true, "<message><body>hi</message>"),
        ("a stray closing tag after the header", true, "</nothing>"),
    ])
    func garbageIsNotWellFormedAndClosesTheStream(_ what: String, afterHeader: Bool, garbage: String) throws {
        try LiveServer.run { server in
            let client = try server.connect()
            if afterHeader { try client.openStream() }
            try client.send(garbage)
            let events = try client.readUntilClosed()
            #expect(events.streamErrorCondition == "not-well-formed", "\(what): \(events)")
            #expect(events.endsWithStreamClose, "\(what): \(events)")
            #expect(client.serverClosed)

            let other = try server.connectWithTLS()
            try other.register("romeo", "montague")
            try other.login("romeo", "montague")
            #expect(try other.ping()[attribute: "type"] == "result", "the server still serves after \(what)")
        }
    }

    @Test func shutdownSendsSystemShutdownToEveryClient() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let bound = try server.loggedInClient("romeo", "montague")
            let negotiating = try server.connect()
            try negotiating.openStream()

            server.server.shutdown()
            for client in [bound, negotiating] {
                let events = try client.readUntilClosed()
                #expect(events.streamErrorCondition == "system-shutdown", "\(events)")
                #expect(events.endsWithStreamClose, "\(events)")
            }
            #expect(throws: TestFailure.self, "the listener is closed") { try server.connect() }
        }
    }

    @Test func bindingTheSameFullJIDEndsTheFirstSessionWithConflict() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let first = try server.loggedInClient("romeo", "montague", resource: "phone")
            let second = try server.connectWithTLS()
            #expect(try second.login("romeo", "montague", resource: "phone") == "romeo@localhost/phone")

            let events = try first.readUntilClosed()
            #expect(events.streamErrorCondition == "conflict", "\(events)")
            #expect(events.endsWithStreamClose, "\(events)")
            #expect(try second.ping()[attribute: "type"] == "result", "the second session carries on")
        }
    }
}
