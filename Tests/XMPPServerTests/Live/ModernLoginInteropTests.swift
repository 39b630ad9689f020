import Testing

/// The modern login features checked by a client that shares no code with
/// the server, against a live in-process server: runs
/// `tools/interop/sasl2_interop.py`, a Python client written from the
/// RFCs and XEPs on pyOpenSSL (SCRAM-SHA-256-PLUS with tls-exporter over
/// TLS 1.3 and 1.2 and SCRAM-SHA-1-PLUS with tls-server-end-point in RFC
/// 6120 SASL, the XEP-0474 `h=` checked each time; XEP-0388 SASL2 with
/// XEP-0386 Bind 2 and a token request; inline XEP-0198 resumption with a
/// message waiting; XEP-0484 FAST with each Hashed Token mechanism in one
/// round trip after TLS; a wrong token, an invalidated one and a GS2 'y'
/// refused).
///
/// Also a SASL2 login by nbxmpp, Gajim's library, a client of the XEP
/// that shares no code with this project: `tools/interop/nbxmpp_sasl2.py`
/// (SCRAM-SHA-256 in XEP-0388's namespace, since nbxmpp binds no channel,
/// then RFC 6120 binding, a ping and a message to itself).
///
/// Each is skipped when `python3` cannot import its libraries (pyOpenSSL;
/// nbxmpp with PyGObject and libsoup 3's typelib), unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes a missing
/// library a failure (see `PythonInterop`).
@Suite(.timeLimit(.minutes(2)))
struct ModernLoginInteropTests {
    /// How long the script may take; it takes a few seconds, and each of
    /// its reads has a 20 s deadline of its own.
    static let scriptTimeout = 60.0

    static let pyOpenSSL = PythonInterop.probe(["OpenSSL", "cryptography"])

    @Test(
        .enabled(
            if: pyOpenSSL.shouldRun,
            """
            pyOpenSSL is not installed (python3 -c 'import OpenSSL, cryptography' failed): \
            pip install pyOpenSSL, or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """))
    func modernLoginScriptPasses() throws {
        guard PythonInterop.requireAvailable(Self.pyOpenSSL) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("sasl2_interop.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "sasl2_interop.py", lastLine: "ok   all modern login interop steps passed",
                timeout: Self.scriptTimeout)
            // The server saw each binding the script claims to have used.
            for login in [
                "with SCRAM-SHA-256-PLUS, bound to tls-exporter", "with SCRAM-SHA-1-PLUS, bound to tls-server-end-point",
                "with HT-SHA-256-EXPR, bound to tls-exporter", "with HT-SHA-256-ENDP, bound to tls-server-end-point",
                "with HT-SHA-256-NONE",
            ] {
                #expect(server.log.lines.contains { $0.contains(login) }, "no login \(login) in the server's log")
            }
        }
    }

    @Test(
        .enabled(if: PythonInterop.nbxmpp.shouldRun, PythonInterop.nbxmppMissing))
    func nbxmppLogsInWithSASL2() throws {
        guard PythonInterop.requireAvailable(PythonInterop.nbxmpp) else { return }
        try LiveServer.run { server in
            try server.register("gajim", "nb-pässword")
            let outcome = try PythonInterop.run(
                "nbxmpp_sasl2.py", against: server, arguments: ["gajim", "nb-pässword"], timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "nbxmpp_sasl2.py", lastLine: "ok   all nbxmpp SASL2 steps passed", timeout: Self.scriptTimeout)
            #expect(
                server.log.lines.contains { $0.contains("authenticated as gajim@localhost with SCRAM-SHA-256") },
                "\(server.log.lines.joined(separator: "\n"))")
        }
    }
}
