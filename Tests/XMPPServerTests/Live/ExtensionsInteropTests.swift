import Testing

/// The server's XMPP extensions against slixmpp's plugins, a third-party
/// implementation of each, on a live in-process server: runs one scenario
/// of `tools/interop/extensions_interop.py` per test, each on a fresh
/// server:
/// - XEP-0280 carbons: `<received/>` and `<sent/>` copies from the user's
///   bare JID, priorities deciding which resource gets the message itself,
///   `<private/>` not copied and removed;
/// - XEP-0054 vCard and XEP-0153 avatar: a vCard with a 200 KB photo stored
///   and fetched byte for byte, the photo's hash in presence;
/// - XEP-0191 blocking: the errors both ways, the list and its pushes,
///   unavailable presence to the blocked contact and available after;
/// - XEP-0198 resumption: a connection cut without closing the stream,
///   messages sent meanwhile delivered once after slixmpp resumes;
/// - XEP-0092, XEP-0202 and XEP-0012 queries.
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// slixmpp a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(2)))
struct ExtensionsInteropTests {
    /// How long one scenario may take; each takes one or two seconds, and
    /// each of its steps has a 20 s deadline of its own.
    static let scriptTimeout = 60.0

    static let slixmpp = PythonInterop.probe(["slixmpp"])

    /// The script's scenarios, by the name it takes as an argument.
    enum Scenario: String, CaseIterable {
        case carbons, vcard, blocking, resumption, info
    }

    @Test(
        .enabled(
            if: slixmpp.shouldRun,
            """
            slixmpp is not installed (python3 -c 'import slixmpp' failed): pip install slixmpp, \
            or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """),
        arguments: Scenario.allCases)
    func scenarioPasses(_ scenario: Scenario) throws {
        guard PythonInterop.requireAvailable(Self.slixmpp) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run(
                "extensions_interop.py", against: server, arguments: [scenario.rawValue],
                timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "extensions_interop.py \(scenario.rawValue)",
                lastLine: "ok   all extension interop steps passed: \(scenario.rawValue)",
                timeout: Self.scriptTimeout)
        }
    }
}
