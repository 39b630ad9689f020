import Foundation
import Testing

/// Interop of the service administration commands (XEP-0050, XEP-0133)
/// with slixmpp's plugins, against the real `swiftletd` on an ephemeral
/// port whose config file names the script's admin in `admins`:
/// `tools/interop/adhoc_interop.py` (the admin lists the commands, adds a
/// user who logs in, lists the online users, changes the user's password
/// and deletes the user, each ending the user's stream).
///
/// Skipped when `python3 -c "import slixmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1`, which makes a missing slixmpp a failure
/// (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct AdHocInteropTests {
    @Test(.enabled(if: SlixmppInteropTests.slixmpp.shouldRun, "slixmpp is not installed: pip install slixmpp"))
    func adHocScriptPasses() throws {
        guard PythonInterop.requireAvailable(SlixmppInteropTests.slixmpp) else { return }
        let dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-adhoc-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let config = dataDirectory + "/swiftletd.conf"
        try "admins = boss\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try SwiftletdProcess(dataDirectory: dataDirectory, arguments: ["--config", config])
        defer { daemon.kill() }
        let outcome = try PythonInterop.run(
            "adhoc_interop.py", at: daemon.address, trusting: dataDirectory + "/tls/localhost-ca.crt", arguments: ["boss"],
            timeout: SlixmppInteropTests.scriptTimeout)
        PythonInterop.expectPassed(
            outcome, "adhoc_interop.py", lastLine: "ok   all ad-hoc interop steps passed",
            timeout: SlixmppInteropTests.scriptTimeout)
        #expect(daemon.output.contains("boss@localhost/adhoc ran the command \(Self.admin)#delete-user"))
    }

    private static let admin = "http://jabber.org/protocol/admin"
}
