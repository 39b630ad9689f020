import Foundation
import Testing
import XMPPServer

/// What a desktop client does after login, done by nbxmpp, Gajim's XMPP
/// library, which shares no code with this project, against a live
/// in-process server with an HTTPS upload listener:
/// `tools/interop/nbxmpp_client.py` logs alice and bob (accounts made here)
/// in over STARTTLS with the server's local CA as GLib's trust store (a
/// connection trusting the system's store instead is refused with a bad
/// certificate); they subscribe to each other until both rosters say
/// "both", chat both ways, and bob gets a message sent while he was away,
/// with a delay stamp. alice uploads a file over HTTPS (XEP-0363, libsoup
/// as Gajim uses it) that bob downloads from the https:// link she sends
/// him, trusting only the CA; she publishes an XEP-0084 avatar that bob
/// reads back; bob finds the conversation in his archive (XEP-0313); both
/// close their streams cleanly.
///
/// Skipped when `python3 -c "import gi, nbxmpp"` fails, unless
/// `SWIFTLET_REQUIRE_INTEROP=1`, which makes a missing nbxmpp a failure
/// (see `PythonInterop`).
@Suite(.timeLimit(.minutes(1)))
struct NbxmppClientInteropTests {
    /// How long the script may take; it takes a few seconds, and each of
    /// its steps has a 20 s deadline of its own.
    static let scriptTimeout = 45.0
    /// The password of both accounts.
    static let password = "nb-client-\(UUID().uuidString.prefix(8))"
    /// The size of the file the script uploads.
    static let uploadSize = 30_000

    @Test(
        .enabled(if: PythonInterop.nbxmpp.shouldRun, PythonInterop.nbxmppMissing))
    func nbxmppChatsUploadsPublishesAnAvatarAndReadsTheArchive() throws {
        guard PythonInterop.requireAvailable(PythonInterop.nbxmpp) else { return }
        // With an HTTPS listener, slot URLs are https ones.
        try LiveServer.run(configure: { $0.http.tlsListen = [ListenAddress("127.0.0.1:0")!] }) { server in
            try server.register("alice", Self.password)
            try server.register("bob", Self.password)
            let outcome = try PythonInterop.run(
                "nbxmpp_client.py", against: server, arguments: ["alice", "bob", Self.password],
                timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "nbxmpp_client.py", lastLine: "ok   all nbxmpp client steps passed",
                timeout: Self.scriptTimeout)
            guard outcome.status == 0 else { return }
            let log = server.log.lines
            let logText = log.joined(separator: "\n")
            // alice logged in once: her attempt with the system's trust
            // store ended in the TLS handshake, before SASL. bob twice:
            // before and after he was away.
            #expect(log.filter { $0.contains("authenticated as alice@localhost with") }.count == 1, "\(logText)")
            #expect(log.filter { $0.contains("authenticated as bob@localhost with") }.count == 2, "\(logText)")
            // The upload the script reports went through this server.
            try PythonInterop.expectUploadLogged(outcome, size: Self.uploadSize, by: server)
        }
    }
}
