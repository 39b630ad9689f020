import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

/// Input that arrives a byte at a time is answered as soon as its last byte
/// is in, on plaintext and over TLS with one record per byte: no stanza waits
/// in the parser for the peer's next bytes (as it would with Expat's reparse
/// deferral left on).
@Suite(.timeLimit(.minutes(1)))
struct LiveTrickleTests {
    /// How long the server may take to answer once the last byte is sent.
    static let answerWithin = Duration.seconds(1)

    @Test func aStreamHeaderAndAStanzaSentByteByByteOverPlaintextAreAnswered() throws {
        try LiveServer.run { server in
            let client = try server.connect()
            try client.trickle(
                "<?xml version='1.0'?><stream:stream xmlns='jabber:client' "
                    + "xmlns:stream='http://etherx.jabber.org/streams' version='1.0' to='localhost'>")
            let header = try Self.timed { try client.nextEvent() }
            guard case .streamOpen = header else { throw TestFailure("expected a stream header, got \(header)") }
            #expect(try client.nextElement().name == "features")

            try client.trickle("<iq type='get' id='form'><query xmlns='jabber:iq:register'/></iq>")
            let reply = try Self.timed { try client.nextElement() }
            #expect(reply[attribute: "id"] == "form")
            #expect(reply[attribute: "type"] == "result")
        }
    }

    @Test func aStanzaSentInOneTLSRecordPerByteIsAnswered() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let client = try server.loggedInClient("romeo", "montague")
            try client.trickle("<iq type='get' id='trickled' to='localhost'><ping xmlns='urn:xmpp:ping'/></iq>")
            let reply = try Self.timed { try client.nextElement() }
            #expect(reply[attribute: "id"] == "trickled")
            #expect(reply[attribute: "type"] == "result")
        }
    }

    /// Runs `wait` and fails when it took longer than `answerWithin`.
    private static func timed<Result>(_ wait: () throws -> Result) throws -> Result {
        let start = ContinuousClock.now
        let result = try wait()
        let took = ContinuousClock.now - start
        #expect(took < answerWithin, "answered after \(took)")
        return result
    }
}
