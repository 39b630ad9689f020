import Foundation
import Testing
import XMPPServer

/// The terminal client profanity, which shares no code with this project,
/// against a live in-process server with an HTTPS upload listener:
/// `tools/interop/profanity_interop.py` drives profanity in tmux as alice
/// (an account made here) with slixmpp as bob. Profanity logs in over
/// STARTTLS with `tls force`, trusting the server's local CA through
/// `/tls certpath` only (without it, it refuses the certificate); it
/// allows and asks for a subscription, chats both ways, gets a message
/// sent while it was away, uploads a file over HTTPS that bob downloads,
/// publishes an avatar bob reads from PEP, and, started again with no
/// local history and `/mam on`, shows earlier messages from the archive.
///
/// Skipped when `profanity`, `tmux` or `openssl` is not on the PATH or
/// `python3 -c "import slixmpp"` fails, unless `SWIFTLET_REQUIRE_INTEROP=1`
/// (as CI sets it), which makes their absence a failure (see
/// `PythonInterop`).
@Suite(.timeLimit(.minutes(2)))
struct ProfanityInteropTests {
    /// How long the script may run; it takes a few seconds, and each of
    /// its steps has a deadline of its own (20 s for each wait, 40 s for
    /// the step).
    static let scriptTimeout = 90.0
    static let alicePassword = "looking-glass-\(UUID().uuidString.prefix(8))"
    /// The size of the file the script uploads.
    static let uploadSize = 50_000

    static let tools: PythonInterop.Libraries = {
        var probe = PythonInterop.probe(["slixmpp"])
        let missing = ["profanity", "tmux", "openssl"].filter { executableOnPath($0) == nil }
        if !missing.isEmpty {
            probe.available = false
            probe.output += "not on the PATH: \(missing.joined(separator: ", "))"
        }
        return probe
    }()

    /// The path of the executable `name` in a directory of the PATH, if any.
    static func executableOnPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    @Test(
        .enabled(
            if: tools.shouldRun,
            """
            profanity, tmux, openssl or slixmpp is missing: apt-get install profanity tmux openssl, \
            pip install slixmpp, or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """))
    func profanityLogsInChatsUploadsAndReadsTheArchive() throws {
        guard PythonInterop.requireAvailable(Self.tools) else { return }
        // With an HTTPS listener, slot URLs are https ones.
        try LiveServer.run(configure: { $0.http.tlsListen = [ListenAddress("127.0.0.1:0")!] }) { server in
            try server.register("alice", Self.alicePassword)
            let outcome = try PythonInterop.run(
                "profanity_interop.py", against: server, arguments: [Self.alicePassword],
                timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "profanity_interop.py", lastLine: "ok   all profanity steps passed",
                timeout: Self.scriptTimeout)
            guard outcome.status == 0 else { return }
            let log = server.log.lines
            let logText = log.joined(separator: "\n")
            // Three logins: the first, after /disconnect, the fresh
            // profanity. The attempt without the CA ended in the TLS
            // handshake (profanity refused the certificate), before SASL.
            #expect(log.filter { $0.contains("authenticated as alice@localhost") }.count == 3, "\(logText)")
            // The upload the script reports went through this server.
            try PythonInterop.expectUploadLogged(outcome, size: Self.uploadSize, by: server)
        }
    }
}
