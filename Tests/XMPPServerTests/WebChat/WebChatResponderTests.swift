import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// `/chat` without sockets: requests fed to an `HTTPConnection` on an
/// in-memory transport, routed by `HTTPRoutes` as the server routes them.
@Suite struct WebChatResponderTests {
    private typealias Transport = HTTPConnectionTests.Transport

    private let loop = ManualLoop()
    private let log = Logger(level: .error, label: "test", sink: LogRecorder())

    /// A response as the transport received it.
    private struct Response {
        var status: Int
        var fields: [String: String]
        var body: String
    }

    /// A stand-in for Strophe.js, so that these tests need no `libjs-strophe`.
    private static let strophe: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-test-strophe.js").path
        FileManager.default.createFile(atPath: path, contents: Data("var Strophe = {};\n".utf8))
        return path
    }()

    private static func files(strophe: String = strophe) -> WebChatFiles {
        WebChatFiles.load(strophePath: strophe)
    }

    private func get(
        _ target: String, method: String = "GET", files: WebChatFiles = files(), config: ServerConfig = ServerConfig(),
        demo: Bool = false, uploadOrigin: String? = "http://localhost:5280"
    ) -> Response {
        let routes = HTTPRoutes()
        let chat = WebChatResponder(files: files, config: WebChatConfig(config, demo: demo)) { uploadOrigin }
        for path in WebChatResponder.paths { routes.add(path, chat) }
        let transport = Transport()
        let connection = HTTPConnection(
            transport: transport, peer: SocketAddress(ip: "127.0.0.1", port: 40000)!, loop: loop, responder: routes,
            tls: nil, timeout: .seconds(10), log: log)
        Array("\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8).withUnsafeBytes { connection.receive($0) }
        #expect(transport.closed)
        let text = transport.text
        let end = text.range(of: "\r\n\r\n")
        let head = end.map { String(text[..<$0.lowerBound]) } ?? text
        let body = end.map { String(text[$0.upperBound...]) } ?? ""
        let lines = head.split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ")[1] ?? "") ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            fields[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        return Response(status: status, fields: fields, body: body)
    }

    @Test(arguments: [
        ("/chat", "text/html; charset=utf-8", "/chat/strophe.js"),
        ("/chat/", "text/html; charset=utf-8", "/chat/chat.js"),
        ("/chat/chat.css", "text/css; charset=utf-8", "@media (max-width"),
        ("/chat/client.js", "text/javascript; charset=utf-8", "class ChatClient"),
        ("/chat/chat.js", "text/javascript; charset=utf-8", "DOMContentLoaded"),
        ("/chat/strophe.js", "text/javascript; charset=utf-8", "var Strophe"),
    ])
    func thePageAndItsFilesAreServed(path: String, type: String, excerpt: String) {
        let response = get(path)
        #expect(response.status == 200)
        #expect(response.fields["content-type"] == type)
        #expect(response.fields["x-content-type-options"] == "nosniff")
        #expect(response.fields["cache-control"] == "no-cache")
        #expect(response.body.contains(excerpt))
        #expect(response.fields["content-length"] == String(response.body.utf8.count))
    }

    @Test func thePolicyAllowsThisOriginWebSocketsAndTheUploadServiceOnly() throws {
        let policy = try #require(get("/chat").fields["content-security-policy"])
        let directives = Dictionary(
            uniqueKeysWithValues: policy.split(separator: ";").map { directive in
                let words = directive.split(separator: " ").map(String.init)
                return (words[0], Array(words.dropFirst()))
            })
        #expect(directives["default-src"] == ["'self'"])
        #expect(directives["script-src"] == ["'self'"], "no inline script")
        #expect(directives["style-src"] == ["'self'"])
        #expect(directives["connect-src"] == ["'self'", "ws:", "wss:", "http://localhost:5280"])
        #expect(directives["img-src"] == ["'self'", "blob:", "data:", "http://localhost:5280"])
        #expect(directives["frame-ancestors"] == ["'none'"])
        let withoutUploads = try #require(get("/chat", uploadOrigin: nil).fields["content-security-policy"])
        #expect(withoutUploads.contains("connect-src 'self' ws: wss:;"))
    }

    @Test func thePageRunsOnlyItsOwnScriptsAndWritesNoHTML() {
        let html = get("/chat").body
        #expect(!html.contains("<script>"), "scripts come from files only")
        #expect(!html.contains("style="), "styles come from chat.css only")
        #expect(!html.contains("http://") && !html.contains("https://"), "nothing from another origin")
        for script in ["/chat/chat.js", "/chat/client.js"] {
            let code = get(script).body
            #expect(!code.contains("innerHTML") && !code.contains("eval("), "text from the network stays text: \(script)")
        }
    }

    @Test(arguments: [
        "/chat/nothing.js", "/chat/../etc/passwd", "/chat/%2e%2e/etc/passwd", "/chat//chat.js", "/chat/Chat.js",
        "/chat/page/index.html", "/chat/chat.js/", "/chatty",
    ])
    func anythingElseIsNotFound(path: String) {
        #expect(get(path).status == 404)
    }

    @Test func headAnswersTheHeadOnly() {
        let response = get("/chat/chat.js", method: "HEAD")
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(Int(response.fields["content-length"] ?? "") ?? 0 > 100)
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "OPTIONS"])
    func otherMethodsGet405(method: String) {
        let response = get("/chat", method: method)
        #expect(response.status == 405)
        #expect(response.fields["allow"] == "GET, HEAD")
    }

    @Test func withoutStropheTheChatSaysWhatToInstall() {
        let files = Self.files(strophe: "/nonexistent/strophe.js")
        #expect(files.unavailable == "install libjs-strophe for the web chat at /chat")
        for path in ["/chat", "/chat/chat.js", "/chat/config.json"] {
            let response = get(path, files: files)
            #expect(response.status == 503)
            #expect(response.body == "install libjs-strophe for the web chat at /chat\n")
        }
    }

    @Test func thePageComesFromTheResourceBundle() throws {
        let directory = try #require(WebChatFiles.resourceDirectory(), "no \(WebChatFiles.resourceBundle) next to the tests")
        #expect(FileManager.default.fileExists(atPath: "\(directory)/index.html"))
        #expect(Self.files().unavailable == nil)
        let missing = WebChatFiles.load(pageDirectory: nil, strophePath: Self.strophe)
        #expect(missing.unavailable?.contains(WebChatFiles.resourceBundle) == true)
    }

    private struct ConfigJSON: Decodable, Equatable {
        var domain: String
        var websocketPath: String
        var mucService: String?
        var demo: WebChatConfig.Demo?
    }

    @Test func configJSONNamesTheDomainTheWebSocketAndTheRoomService() throws {
        var config = ServerConfig()
        config.domain = "chat.example"
        let response = get("/chat/config.json", config: config)
        #expect(response.status == 200)
        #expect(response.fields["content-type"] == "application/json; charset=utf-8")
        let parsed = try JSONDecoder().decode(ConfigJSON.self, from: Data(response.body.utf8))
        #expect(
            parsed
                == ConfigJSON(
                    domain: "chat.example", websocketPath: "/xmpp-websocket", mucService: "conference.chat.example",
                    demo: nil))
        config.muc.enabled = false
        #expect(get("/chat/config.json", config: config).body.contains("mucService") == false)
    }

    @Test func inDemoModeConfigJSONOffersTheDemoAccounts() throws {
        let parsed = try JSONDecoder().decode(ConfigJSON.self, from: Data(get("/chat/config.json", demo: true).body.utf8))
        #expect(parsed.demo == WebChatConfig.Demo(users: ["alice", "bob", "carol"], password: Demo.password))
    }

    @Test func theUploadOriginIsTheURLsSchemeHostAndPort() {
        #expect(WebChatResponder.origin(of: "http://localhost:5280") == "http://localhost:5280")
        #expect(WebChatResponder.origin(of: "https://files.example.com/xmpp") == "https://files.example.com")
        #expect(WebChatResponder.origin(of: "") == nil)
        #expect(WebChatResponder.origin(of: "https:///path") == nil)
    }

    @Test func theKeyWebChatTurnsItOff() throws {
        #expect(ServerConfig().http.webChat)
        let config = try ServerConfig.parse("web_chat = no\n", fileName: "test.conf")
        #expect(!config.http.webChat)
    }
}
