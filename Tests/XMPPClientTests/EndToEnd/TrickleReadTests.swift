import Foundation
import Glibc
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPClient

/// The client kit's transport hands on a stanza as soon as its last byte is
/// read, however small that last read: a large stanza (a vCard photo, a MAM
/// page) whose final bytes arrive alone is not kept until the next keepalive.
@Suite(.timeLimit(.clientSuite))
struct TrickleReadTests {
    @Test func aLargeStanzaWhoseLastBytesArriveOneAtATimeIsDelivered() async throws {
        let listener = try LoopbackListener()
        let transport = try await StreamTransport.connect(
            host: listener.address.ipString, port: listener.address.port, timeout: .seconds(5), through: TCPConnector())
        defer { transport.close() }
        let peer = try listener.accept()
        defer { close(peer) }

        let photo = String(repeating: "QUJD", count: 32 * 1024)  // 128 KiB of base64
        let stanza = "<iq type='result' id='big'><vCard xmlns='vcard-temp'><PHOTO><BINVAL>\(photo)</BINVAL>"
            + "</PHOTO></vCard></iq>"
        let head = Array(
            ("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"
                + stanza).utf8)
        let tail = head.count - 40  // the last 40 bytes, one write each
        try LoopbackListener.write(head[..<tail], to: peer)
        for byte in head[tail...] {
            try LoopbackListener.write([byte], to: peer)
            // Real time on purpose: this tests the TCP transport itself, and
            // only a pause between writes makes each byte its own read.
            try await Task.sleep(for: .milliseconds(2))
        }
        // Nothing more arrives: a stanza kept for the next read would never
        // come, so the bound of the wait tells a regression (not a speed).
        let events = try await firstEvents(2, of: transport, within: .seconds(3))
        guard events.count == 2, case .element(let element) = events[1] else {
            throw TestFailure("the stanza was not delivered: \(events)")
        }
        #expect(element[attribute: "id"] == "big")
        #expect(element.child("vCard", namespace: "vcard-temp")?.child("PHOTO")?.childText("BINVAL")?.count == photo.count)
    }

    /// The first `count` events of `transport`, or fewer if `limit` passes first.
    private func firstEvents(_ count: Int, of transport: StreamTransport, within limit: Duration) async throws
        -> [XMLStreamEvent]
    {
        try await withThrowingTaskGroup(of: [XMLStreamEvent].self) { group in
            group.addTask {
                var events: [XMLStreamEvent] = []
                for try await event in transport.events {
                    events.append(event)
                    if events.count == count { break }
                }
                return events
            }
            group.addTask {
                // The bound on a wait that should end far sooner, not an
                // assertion of absence: a regression fails instead of hanging.
                try await Task.sleep(for: limit)
                return []
            }
            let first = try await group.next() ?? []
            group.cancelAll()
            transport.abort(.timedOut)
            return first
        }
    }
}
