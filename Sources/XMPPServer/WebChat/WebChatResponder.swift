import Foundation

/// `/chat`: the built-in web chat, a page that logs in over XMPP over
/// WebSocket (`/xmpp-websocket`) with Strophe.js.
///
/// | request | answer |
/// |---------|--------|
/// | `GET`, `HEAD` `/chat` or `/chat/` | `200`, the page (`index.html`) |
/// | `GET`, `HEAD` `/chat/<name>` for the page's files and `strophe.js` | `200` |
/// | `GET`, `HEAD` `/chat/config.json` | `200`, what the page needs to know (`WebChatConfig`) |
/// | `GET`, `HEAD` anything else under `/chat/` | `404` |
/// | anything, when a file is missing (`libjs-strophe` not installed) | `503` saying what to install |
/// | any other method | `405` |
///
/// Every answer has `nosniff`, `Cache-Control: no-cache` and a strict
/// `Content-Security-Policy`: scripts and styles from here only, no inline
/// script, connections to here and to WebSockets, images also from the
/// upload service's origin and `blob:`/`data:` (previews of files picked).
final class WebChatResponder: HTTPResponder {
    /// The paths routed here (`HTTPRoutes`): the page, and its files below.
    static let paths = ["/chat", "/chat/"]

    private let files: WebChatFiles
    /// `/chat/config.json`.
    private let configFile: WebChatFiles.File
    /// The upload service's origin (`http://localhost:5280`), asked per
    /// request since the URL is fixed only once the listeners are bound.
    private let uploadOrigin: () -> String?

    init(files: WebChatFiles, config: WebChatConfig, uploadOrigin: @escaping () -> String?) {
        self.files = files
        configFile = WebChatFiles.File(contentType: "application/json; charset=utf-8", body: config.json)
        self.uploadOrigin = uploadOrigin
    }

    /// Serves the web chat at `/chat` on `routes`, or `503` there with a
    /// warning in the log when its files (Strophe.js) are missing.
    /// - Parameter demo: Offer the demo accounts (`swiftletd demo`).
    static func mount(on routes: HTTPRoutes, context: ServerContext, demo: Bool) {
        let files = WebChatFiles.load()
        if let reason = files.unavailable { context.log.warning(reason) }
        let config = WebChatConfig(context.config, demo: demo)
        let chat = WebChatResponder(files: files, config: config) { [weak context] in
            context?.upload.flatMap { origin(of: $0.baseURL) }
        }
        for path in paths { routes.add(path, chat) }
    }

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        guard request.method == "GET" || request.method == "HEAD" else {
            return connection.respond(
                .text(.methodNotAllowed, "the web chat answers GET and HEAD", fields: [("Allow", "GET, HEAD")]))
        }
        if let reason = files.unavailable { return connection.respond(.text(.serviceUnavailable, reason)) }
        // Routed here: "/chat", or a path starting with "/chat/".
        let name = request.path == "/chat" || request.path == "/chat/" ? "index.html" : request.path.dropFirst(6)
        guard let file = name == "config.json" ? configFile : files.files[String(name)] else {
            return connection.respond(.text(.notFound, "the web chat has no such file"))
        }
        connection.respond(HTTPResponse(.ok, fields: fields(file.contentType), body: file.body))
    }

    /// The fields of every file served.
    private func fields(_ contentType: String) -> [(name: String, value: String)] {
        let uploads = uploadOrigin().map { " " + $0 } ?? ""
        let policy =
            "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self' ws: wss:\(uploads); "
            + "img-src 'self' blob: data:\(uploads); object-src 'none'; base-uri 'none'; form-action 'none'; "
            + "frame-ancestors 'none'"
        return [
            ("Content-Type", contentType), ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-cache"),
            ("Content-Security-Policy", policy), ("Referrer-Policy", "no-referrer"),
        ]
    }

    /// `scheme://host[:port]` of `url`, the part a CSP source names.
    static func origin(of url: String) -> String? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        let host = rest.prefix { $0 != "/" }
        return host.isEmpty ? nil : String(url[..<schemeEnd.upperBound] + host)
    }
}

/// `/chat/config.json`: what the page cannot know by itself.
struct WebChatConfig: Codable, Sendable, Equatable {
    /// The server's domain, for JIDs typed as bare usernames.
    var domain: String
    /// The WebSocket endpoint's path on this host (`/xmpp-websocket`).
    var websocketPath: String
    /// The group chat service (`conference.<domain>`), when group chat is on.
    var mucService: String?
    /// The demo accounts' usernames and password, in `swiftletd demo` only.
    var demo: Demo?

    struct Demo: Codable, Sendable, Equatable {
        var users: [String]
        var password: String
    }

    /// What `config` says; with `demo`, the demo accounts.
    init(_ config: ServerConfig, demo isDemo: Bool = false) {
        domain = config.domain
        websocketPath = WebSocketEndpoint.path
        mucService = config.muc.enabled ? config.mucService : nil
        if isDemo {
            demo = Demo(users: XMPPServer.Demo.users.map(\.0), password: XMPPServer.Demo.password)
        }
    }

    /// The JSON text served.
    var json: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, and arrays and structs of them, always encode.
        return Array(try! encoder.encode(self))
    }
}
