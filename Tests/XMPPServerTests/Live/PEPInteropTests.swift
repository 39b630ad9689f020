import Testing

/// XEP-0163 personal eventing and XEP-0084 avatars against slixmpp's
/// plugins (with its XEP-0115 caps), on a live in-process server:
/// `tools/interop/pep_interop.py` publishes an avatar as one user, and a
/// contact whose caps ask for `urn:xmpp:avatar:metadata+notify` gets the
/// metadata notification, fetches the data, and gets the last metadata
/// again on a new resource; disco#info and a stranger's refusal too.
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// slixmpp a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct PEPInteropTests {
    /// How long the script may run; it takes a few seconds, and each of
    /// its steps has a 20 s deadline of its own.
    static let scriptTimeout = 45.0

    static let slixmpp = PythonInterop.probe(["slixmpp"])

    @Test(.enabled(
        if: slixmpp.shouldRun,
        """
        slixmpp is not installed (python3 -c 'import slixmpp' failed): pip install slixmpp, \
        or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
        """))
    func avatarThroughPEPReachesAContact() throws {
        guard PythonInterop.requireAvailable(Self.slixmpp) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("pep_interop.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "pep_interop.py", lastLine: "ok   all PEP interop steps passed", timeout: Self.scriptTimeout)
        }
    }
}
