import Testing
import XMPPTestSupport

/// What OMEMO, bookmarks and avatars need from PEP, across two third-party
/// Python libraries against a live in-process server: runs
/// `tools/interop/pep_compat_interop.py` (OMEMO-style keys published on
/// slixmpp with `access_model=open` and fetched by a stranger on aioxmpp,
/// a contradicting publish-options refused, XEP-0048 bookmarks in private
/// storage read as XEP-0402 and the reverse, a vCard photo read as an
/// XEP-0084 avatar and the reverse). The same script passes against
/// Prosody 0.12 with `pep`, `private`, `bookmarks` and `vcard_legacy`.
///
/// Skipped when `python3` cannot import slixmpp and aioxmpp, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// library a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(2)))
struct PEPCompatInteropTests {
    /// How long the script may take; it takes a few seconds, and each of its
    /// steps has a 20 s deadline of its own.
    static let scriptTimeout = 90.0

    @Test(
        .enabled(
            if: IMInteropTests.libraries.shouldRun,
            """
            slixmpp or aioxmpp is not installed (python3 -c 'import slixmpp, aioxmpp' failed): \
            pip install slixmpp aioxmpp pytz, or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """))
    func pepCompatibilityScriptPasses() throws {
        guard PythonInterop.requireAvailable(IMInteropTests.libraries) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("pep_compat_interop.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "pep_compat_interop.py", lastLine: "ok   all PEP compatibility interop steps passed",
                timeout: Self.scriptTimeout)
        }
    }
}
