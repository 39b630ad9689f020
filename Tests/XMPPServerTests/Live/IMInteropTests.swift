import Testing
import XMPPCore
import XMPPTestSupport

/// RFC 6121 instant messaging with two third-party Python libraries,
/// slixmpp and aioxmpp, against a live in-process server: runs
/// `tools/interop/im_interop.py` (in-band registration, roster and
/// subscription handshake to `both`, presence both ways, a non-ASCII chat
/// body both ways, unavailable presence at logout, offline messages
/// delivered in order with an XEP-0203 delay, and an XEP-0084 avatar
/// published over PEP that the other library, asking for it through its
/// XEP-0115 caps, is notified of and fetches) once with each library as
/// the user who adds the other.
///
/// Skipped when `python3` cannot import slixmpp and aioxmpp, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// library a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(2)))
struct IMInteropTests {
    /// How long one run of the script may take; it takes about two seconds,
    /// and each of its steps has a 20 s deadline of its own.
    static let scriptTimeout = 90.0

    static let libraries = PythonInterop.probe(["slixmpp", "aioxmpp"])

    /// The library of the user who adds the other (A in the script).
    enum Adder: String, CaseIterable, CustomTestStringConvertible {
        case slixmpp, aioxmpp

        var testDescription: String { "\(rawValue) adds \(self == .slixmpp ? "aioxmpp" : "slixmpp")" }
    }

    @Test(
        .enabled(
            if: libraries.shouldRun,
            """
            slixmpp or aioxmpp is not installed (python3 -c 'import slixmpp, aioxmpp' failed): \
            pip install slixmpp aioxmpp pytz, or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """),
        arguments: Adder.allCases)
    func imScriptPasses(_ adder: Adder) throws {
        guard PythonInterop.requireAvailable(Self.libraries) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run(
                "im_interop.py", against: server, arguments: [adder.rawValue], timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "im_interop.py", lastLine: "ok   all IM interop steps passed with A=\(adder.rawValue)",
                timeout: Self.scriptTimeout)
        }
    }

    /// A roster set like the one slixmpp's `update_roster` sends for a new
    /// contact, with `subscription='none'`. RFC 6121 §2.1.2.5: "in a roster
    /// set the server MUST ignore all values of the 'subscription'
    /// attribute other than 'remove'", so the item is added.
    @Test func aRosterSetWithSubscriptionNoneAddsTheItem() throws {
        try LiveServer.run { server in
            try server.register("romeo", "montague")
            let client = try server.loggedInClient("romeo", "montague")
            try client.send(
                "<iq id='add1' type='set'><query xmlns='jabber:iq:roster'>"
                    + "<item name='Juliet' subscription='none' jid='juliet@localhost'/></query></iq>")
            let reply = try client.reply(to: "add1")
            try #require(reply[attribute: "type"] == "result", "\(reply.xml)")
            try client.send("<iq id='get1' type='get'><query xmlns='jabber:iq:roster'/></iq>")
            let roster = try client.reply(to: "get1")
            let items = roster.child("query", namespace: NS.roster)?.elements ?? []
            #expect(items.map { $0[attribute: "jid"] } == ["juliet@localhost"], "\(roster.xml)")
            #expect(items.first?[attribute: "subscription"] == "none", "\(roster.xml)")
        }
    }
}
