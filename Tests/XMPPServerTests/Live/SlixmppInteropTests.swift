import Testing

/// Interop with slixmpp, a third-party Python XMPP library, against a live
/// in-process server: `tools/interop/slixmpp_basic.py` (registration,
/// SCRAM-SHA-256 over STARTTLS with the certificate verified, bind, ping,
/// disco, the mechanism slixmpp picks itself among the -PLUS and plain
/// ones over STARTTLS, a wrong password, SCRAM-SHA-1 without TLS, a taken
/// username) and
/// `tools/interop/mam_interop.py` (the message archive with slixmpp's
/// XEP-0313, XEP-0359 and XEP-0441 plugins: stanza ids on delivery, RSM
/// paging forward and back, time windows, item-not-found, preferences,
/// offline messages in the archive) and `tools/interop/pep_interop.py`
/// (XEP-0163 and XEP-0084: one user publishes an avatar, a contact whose
/// XEP-0115 caps ask for `urn:xmpp:avatar:metadata+notify` gets the
/// metadata notification, fetches the data, and gets the last metadata
/// again on a new resource; disco#info and a stranger's refusal too).
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// slixmpp a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct SlixmppInteropTests {
    /// How long a script may run; each takes a second or two, and each of
    /// its steps has a 20 s deadline of its own.
    static let scriptTimeout = 45.0

    static let slixmpp = PythonInterop.probe(["slixmpp"])

    @Test(.enabled(
        if: slixmpp.shouldRun,
        """
        slixmpp is not installed (python3 -c 'import slixmpp' failed): pip install slixmpp, \
        or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
        """))
    func slixmppBasicScriptPasses() throws {
        guard PythonInterop.requireAvailable(Self.slixmpp) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("slixmpp_basic.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "slixmpp_basic.py", lastLine: "ok   registering a taken name is a conflict",
                timeout: Self.scriptTimeout)
        }
    }

    @Test(.enabled(if: slixmpp.shouldRun, "slixmpp is not installed: pip install slixmpp"))
    func mamScriptPasses() throws {
        guard PythonInterop.requireAvailable(Self.slixmpp) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("mam_interop.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "mam_interop.py", lastLine: "ok   all MAM interop steps passed", timeout: Self.scriptTimeout)
        }
    }

    @Test(.enabled(if: slixmpp.shouldRun, "slixmpp is not installed: pip install slixmpp"))
    func pepScriptPasses() throws {
        guard PythonInterop.requireAvailable(Self.slixmpp) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("pep_interop.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "pep_interop.py", lastLine: "ok   all PEP interop steps passed", timeout: Self.scriptTimeout)
        }
    }
}
