import Testing
import XMPPTestSupport

/// Group chat (XEP-0045) across two third-party Python libraries, slixmpp
/// (xep_0045) and aioxmpp (MUCClient), against a live in-process server:
/// runs `tools/interop/muc_interop.py` (a room created and configured with
/// the form on each library and joined from the other, a mediated
/// invitation and its decline and a direct XEP-0249 invitation each way,
/// history with the room's delays for an early and a late joiner, messages,
/// nickname and subject changes and private messages both ways, a kick each
/// way (307), a ban (301) and the refused rejoin, and the room's archive,
/// which the script skips with a line of its own when the room does not
/// advertise `urn:xmpp:mam:2`). The same script passes against Prosody 0.12
/// with its `muc` component and `muc_mam`.
///
/// Skipped when `python3` cannot import slixmpp and aioxmpp, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// library a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(3)))
struct MUCInteropTests {
    /// How long the script may take; it takes a few seconds, and each of its
    /// twenty steps has a 20 s deadline of its own.
    static let scriptTimeout = 150.0

    @Test(
        .enabled(
            if: IMInteropTests.libraries.shouldRun,
            """
            slixmpp or aioxmpp is not installed (python3 -c 'import slixmpp, aioxmpp' failed): \
            pip install slixmpp aioxmpp pytz, or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """))
    func groupChatScriptPasses() throws {
        guard PythonInterop.requireAvailable(IMInteropTests.libraries) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("muc_interop.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "muc_interop.py", lastLine: "ok   all MUC interop steps passed", timeout: Self.scriptTimeout)
        }
    }
}
