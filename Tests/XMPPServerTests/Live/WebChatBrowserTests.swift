import Foundation
import Testing
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// The web chat at `/chat` on live servers: served (or not, with
/// `web_chat = no`) on the HTTP listener, and used in real browsers.
///
/// `tools/interop/webchat_browser.py` drives headless Chromium with
/// Selenium: two people register, befriend, chat both ways, share a PNG
/// that both see as an image, meet in a room, and one reloads and finds the
/// conversation in the archive, once over HTTP and once over HTTPS (`wss:`,
/// the server's self-signed certificate accepted by that browser only);
/// against `swiftletd demo` (the real
/// executable, so its resource bundle is found as a user's would be), the
/// Demo button logs in as alice. It saves screenshots at desktop and phone
/// width to `swiftlet-webchat-screenshots` in the temporary directory, or
/// to `SWIFTLET_WEBCHAT_SCREENSHOTS` when set (how `docs/images/webchat-*.png`
/// were made).
///
/// Skipped without `/usr/bin/chromium`, `/usr/bin/chromedriver` or the
/// `selenium` Python package, unless `SWIFTLET_REQUIRE_INTEROP=1` (as CI
/// sets it), which makes their absence a failure.
///
/// One browser run at a time (`.serialized`), each waited for on a thread of
/// its own rather than on one of the few threads all tests share.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct WebChatBrowserTests {
    /// How long a script may run; it bounds itself to 110 s, and takes
    /// about 15.
    static let scriptTimeout = 150.0

    static let browser: PythonInterop.Libraries = {
        var probe = PythonInterop.probe(["selenium"])
        let missing = ["/usr/bin/chromium", "/usr/bin/chromedriver", WebChatFiles.strophePath].filter {
            !FileManager.default.isExecutableFile(atPath: $0) && !FileManager.default.fileExists(atPath: $0)
        }
        if !missing.isEmpty {
            probe.available = false
            probe.output += "missing: \(missing.joined(separator: ", "))"
        }
        return probe
    }()

    static let skipReason: Comment = """
        chromium, chromium-driver, libjs-strophe or selenium is missing: apt-get install chromium \
        chromium-driver libjs-strophe; pip install selenium; or set SWIFTLET_REQUIRE_INTEROP=1 to make this a failure
        """

    /// Runs `body` with the directory for screenshots: when `keeping`,
    /// `SWIFTLET_WEBCHAT_SCREENSHOTS`, else `swiftlet-webchat-screenshots`
    /// in the temporary directory (each run replaces the pictures); when
    /// not, a temporary directory removed afterwards.
    private static func withScreenshotDirectory<T>(keeping: Bool, _ body: (String) throws -> T) rethrows -> T {
        if keeping {
            let environment = ProcessInfo.processInfo.environment["SWIFTLET_WEBCHAT_SCREENSHOTS"]
            return try body(
                environment
                    ?? FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-webchat-screenshots").path)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-shots-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try body(directory)
    }

    @Test func theChatIsServedOnTheHTTPListenerUnlessTurnedOff() throws {
        try LiveServer.run { server in
            let http = server.server.httpAddresses[0]
            let page = try LiveHTTPClient.exchange(http, "GET", "/chat")
            #expect(page.status == 200 || page.status == 503, "503 only without libjs-strophe")
            let unknown = try LiveHTTPClient.exchange(http, "GET", "/chat/nothing")
            #expect(unknown.status == (page.status == 200 ? 404 : 503))
        }
        try LiveServer.run(configure: { $0.http.webChat = false }) { server in
            let page = try LiveHTTPClient.exchange(server.server.httpAddresses[0], "GET", "/chat")
            #expect(page.status == 404)
        }
    }

    /// The scheme of the page, and so of its WebSocket and upload URLs.
    enum Scheme: String, CaseIterable {
        case http, https
    }

    @Test(.enabled(if: browser.shouldRun, skipReason), arguments: Scheme.allCases)
    func twoBrowsersRegisterBefriendChatShareAFileAndFindTheHistory(_ scheme: Scheme) async throws {
        guard PythonInterop.requireAvailable(Self.browser) else { return }
        let outcome = try await Self.onAThreadOfItsOwn { try Self.runConversation(scheme) }
        PythonInterop.expectPassed(
            outcome, "webchat_browser.py \(scheme.rawValue)",
            lastLine: "ok   all web chat browser steps passed: conversation", timeout: Self.scriptTimeout)
    }

    /// Starts a server with a listener for `scheme` and runs the script's
    /// conversation against it.
    private static func runConversation(_ scheme: Scheme) throws -> ChildProcess.Outcome {
        var outcome: ChildProcess.Outcome?
        try LiveServer.run(configure: { config in
            if scheme == .https { config.http.tlsListen = [ListenAddress("127.0.0.1:0")!] }
            config.admins = ["ada"]  // who deletes ben's account at /admin
        }) { server in
            // HTTPS listeners come after the plain ones.
            let port = server.server.httpAddresses[scheme == .https ? 1 : 0].port
            // At 127.0.0.1, the page is of another origin than the upload
            // URLs (at the domain, localhost): CORS and the page's CSP
            // must let the upload and the images through. The pictures
            // kept are the plain run's.
            outcome = try withScreenshotDirectory(keeping: scheme == .http) { screenshots in
                try PythonInterop.run(
                    "webchat_browser.py", against: server,
                    arguments: ["\(scheme.rawValue)://127.0.0.1:\(port)/chat", screenshots], timeout: scriptTimeout)
            }
        }
        return outcome!  // `run` returns only once `body` has run
    }

    @Test(.enabled(if: browser.shouldRun, skipReason))
    func theDemoButtonLogsInAsAlice() async throws {
        guard PythonInterop.requireAvailable(Self.browser) else { return }
        let outcome = try await Self.onAThreadOfItsOwn(Self.runDemo)
        PythonInterop.expectPassed(
            outcome, "webchat_browser.py demo", lastLine: "ok   all web chat browser steps passed: demo",
            timeout: Self.scriptTimeout)
    }

    /// Starts `swiftletd demo` and runs the script's demo steps against it.
    private static func runDemo() throws -> ChildProcess.Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-demo-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let demo = try ChildProcess(
            try ChildProcess.builtExecutable("swiftletd"),
            ["demo", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--https-listen", "127.0.0.1:0", "--data-dir", directory])
        defer { demo.kill() }
        let line = try demo.waitForLine(containing: "HTTP on 127.0.0.1:", timeout: Self.scriptTimeout)
        let http = try #require(
            line.split(separator: "HTTP on ").last.flatMap { SocketAddress($0.trimmingCharacters(in: .whitespaces)) })
        let xmpp = try demo.waitForLine(containing: "Listening on: ", timeout: Self.scriptTimeout)
        let address = try #require(
            xmpp.split(separator: "Listening on: ").last.flatMap {
                SocketAddress($0.trimmingCharacters(in: .whitespaces))
            })
        return try withScreenshotDirectory(keeping: false) { screenshots in
            try PythonInterop.run(
                "webchat_browser.py", at: address, trusting: "\(directory)/tls/localhost-ca.crt",
                arguments: ["http://127.0.0.1:\(http.port)/chat", screenshots, "demo"], timeout: scriptTimeout)
        }
    }

    /// Runs `body`, which waits for a browser run, on a thread of its own:
    /// blocking one of the test runner's few shared threads for that long
    /// would hold up every other test.
    private static func onAThreadOfItsOwn(
        _ body: @escaping @Sendable () throws -> ChildProcess.Outcome
    ) async throws -> ChildProcess.Outcome {
        let handed: HandedOutcome = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { HandedOutcome(try body()) }) }
        }
        return handed.outcome
    }

    /// An outcome handed from the waiting thread to the test, once.
    // @unchecked: immutable, and passed through the continuation only.
    private final class HandedOutcome: @unchecked Sendable {
        let outcome: ChildProcess.Outcome
        init(_ outcome: ChildProcess.Outcome) { self.outcome = outcome }
    }
}
