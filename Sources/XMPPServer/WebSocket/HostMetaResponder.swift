/// XEP-0156 discovery of the WebSocket endpoint: `/.well-known/host-meta`
/// (XRD, RFC 6415) and `/.well-known/host-meta.json` (JRD), each listing
/// `urn:xmpp:alt-connections:websocket` links: `wss://` for every HTTPS
/// listener, then `ws://` for every plain one, at the domain and the bound
/// ports, or only `websocket_url` when it is set (a reverse proxy's).
/// Readable from any page (`Access-Control-Allow-Origin: *`), as
/// web clients fetch it from the domain they serve.
final class HostMetaResponder: HTTPResponder {
    static let xmlPath = "/.well-known/host-meta"
    static let jsonPath = "/.well-known/host-meta.json"
    /// The link relation of RFC 7395 endpoints (XEP-0156 §3).
    static let webSocketRelation = "urn:xmpp:alt-connections:websocket"

    /// The endpoints, best first; set once the listeners are bound.
    var webSocketURLs: [String] = []

    /// The endpoints at `domain` for the bound `secure` and `plain` ports.
    static func webSocketURLs(domain: String, secure: [UInt16], plain: [UInt16]) -> [String] {
        secure.uniqued().map { "wss://\(domain):\($0)\(WebSocketEndpoint.path)" }
            + plain.uniqued().map { "ws://\(domain):\($0)\(WebSocketEndpoint.path)" }
    }

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        guard request.method == "GET" || request.method == "HEAD" else {
            return connection.respond(.text(.methodNotAllowed, "only GET and HEAD", fields: [("Allow", "GET, HEAD")]))
        }
        let isJSON = request.path == Self.jsonPath
        connection.respond(
            HTTPResponse(
                .ok,
                fields: [
                    ("Content-Type", isJSON ? "application/json" : "application/xrd+xml; charset=utf-8"),
                    ("Access-Control-Allow-Origin", "*"), ("X-Content-Type-Options", "nosniff"),
                    ("Cache-Control", "max-age=3600"),
                ],
                body: Array((isJSON ? json : xrd).utf8)))
    }

    private var xrd: String {
        var text = "<?xml version='1.0' encoding='utf-8'?>\n<XRD xmlns='http://docs.oasis-open.org/ns/xri/xrd-1.0'>\n"
        for url in webSocketURLs { text += "  <Link rel='\(Self.webSocketRelation)' href='\(url)'/>\n" }
        return text + "</XRD>\n"
    }

    private var json: String {
        let links = webSocketURLs.map { "{\"rel\":\"\(Self.webSocketRelation)\",\"href\":\"\($0)\"}" }
        return "{\"links\":[\(links.joined(separator: ","))]}\n"
    }
}
