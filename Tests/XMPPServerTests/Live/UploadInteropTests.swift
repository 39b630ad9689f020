import Testing
import XMPPServer

/// XEP-0363 against slixmpp's upload plugin, a third-party implementation,
/// on a live in-process server: `tools/interop/upload_interop.py` finds the
/// service by disco, uploads 1 MiB with aiohttp, sends the URL in a XEP-0066
/// message, downloads it as the recipient and compares the bytes, asks
/// `httpfileupload.localhost` for a slot, and gets `file-too-large` with the
/// limit for a file over `upload_max_size`. Once with plain HTTP URLs, once
/// with HTTPS (`https_listen`, the certificate verified against the
/// server's local CA).
///
/// Skipped when `python3 -c "import slixmpp, aiohttp"` fails (slixmpp's
/// upload plugin needs aiohttp), unless `SWIFTLET_REQUIRE_INTEROP=1` (as
/// CI sets it), which makes a missing library a failure (see
/// `PythonInterop`).
@Suite(.timeLimit(.minutes(2)))
struct UploadInteropTests {
    /// How long the script may run; it takes a second or two, and each of
    /// its steps has a 20 s deadline of its own.
    static let scriptTimeout = 60.0
    /// `upload_max_size` of the test server: room for the 1 MiB file, and
    /// a limit small enough that the script can ask for more.
    static let maxFileSize = 2 << 20

    static let libraries = PythonInterop.probe(["slixmpp", "aiohttp"])

    /// The scheme of the URLs the server hands out.
    enum Scheme: String, CaseIterable {
        case http, https
    }

    @Test(
        .enabled(
            if: libraries.shouldRun,
            """
            slixmpp or aiohttp is not installed (python3 -c 'import slixmpp, aiohttp' failed): \
            pip install slixmpp aiohttp, or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
            """),
        arguments: Scheme.allCases)
    func uploadScriptPasses(_ scheme: Scheme) throws {
        guard PythonInterop.requireAvailable(Self.libraries) else { return }
        try LiveServer.run(configure: { config in
            config.upload.maxFileSize = Self.maxFileSize
            // With an HTTPS listener, slot URLs are https ones
            // (`effectiveUploadURL`); the plain one stays, unused.
            if scheme == .https { config.http.tlsListen = [ListenAddress("127.0.0.1:0")!] }
        }) { server in
            let outcome = try PythonInterop.run(
                "upload_interop.py", against: server, arguments: [scheme.rawValue, String(Self.maxFileSize)],
                timeout: Self.scriptTimeout)
            PythonInterop.expectPassed(
                outcome, "upload_interop.py \(scheme.rawValue)",
                lastLine: "ok   all upload interop steps passed: \(scheme.rawValue)", timeout: Self.scriptTimeout)
        }
    }
}
