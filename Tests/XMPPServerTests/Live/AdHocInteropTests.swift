import Testing

/// Interop of the service administration commands (XEP-0050, XEP-0133)
/// with slixmpp's plugins, against a live in-process server whose
/// `admins` names the script's admin: `tools/interop/adhoc_interop.py`
/// (the admin lists the commands, adds a user who logs in, lists the
/// online users, changes the user's password and deletes the user, each
/// ending the user's stream).
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1`, which makes a missing slixmpp a failure
/// (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct AdHocInteropTests {
    @Test(.enabled(if: SlixmppInteropTests.slixmpp.shouldRun, "slixmpp is not installed: pip install slixmpp"))
    func adHocScriptPasses() throws {
        guard PythonInterop.requireAvailable(SlixmppInteropTests.slixmpp) else { return }
        try LiveServer.run(configure: { $0.admins = ["boss"] }) { server in
            let outcome = try PythonInterop.run(
                "adhoc_interop.py", against: server, arguments: ["boss"], timeout: SlixmppInteropTests.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "adhoc_interop.py", lastLine: "ok   all ad-hoc interop steps passed",
                timeout: SlixmppInteropTests.scriptTimeout)
        }
    }
}
