import Testing

/// XEP-0077 in-band registration by nbxmpp, Gajim's library, which shares
/// no code with this project, against a live in-process server:
/// `tools/interop/nbxmpp_register.py` signs up the way Gajim's account
/// wizard does (register mode over STARTTLS, the data form of §6 filled in
/// and submitted), is refused the same username with `conflict`, and logs
/// in with the new account.
///
/// Skipped when `python3 -c "import gi, nbxmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1`, which makes a missing nbxmpp a failure
/// (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct NbxmppRegisterInteropTests {
    /// How long the script may take; it takes a few seconds, and each of
    /// its steps has a 20 s deadline of its own.
    static let scriptTimeout = 45.0

    @Test(
        .enabled(if: PythonInterop.nbxmpp.shouldRun, PythonInterop.nbxmppMissing))
    func nbxmppRegistersWithTheDataForm() throws {
        guard PythonInterop.requireAvailable(PythonInterop.nbxmpp) else { return }
        try LiveServer.run { server in
            let outcome = try PythonInterop.run("nbxmpp_register.py", against: server, timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "nbxmpp_register.py", lastLine: "ok   all nbxmpp registration steps passed",
                timeout: Self.scriptTimeout)
            guard outcome.status == 0 else { return }
            // The account the script reports is the one the server created,
            // once (the second attempt was a conflict), and logged in.
            let prefix = "ok   registered "
            let line = try #require(outcome.output.split(separator: "\n").first { $0.hasPrefix(prefix) })
            let jid = String(line.dropFirst(prefix.count).prefix { $0 != " " })
            let log = server.log.lines.joined(separator: "\n")
            #expect(server.log.lines.filter { $0.contains("registered \(jid)") }.count == 1, "\(log)")
            #expect(server.log.lines.contains { $0.contains("authenticated as \(jid)") }, "\(log)")
        }
    }
}
