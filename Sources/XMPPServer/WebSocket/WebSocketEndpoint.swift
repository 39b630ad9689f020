import XMPPCore
import XMPPNet

/// `/xmpp-websocket`: the opening handshake of RFC 6455 §4.2 for the
/// subprotocol `xmpp` (RFC 7395 §3.1), after which the connection carries
/// a client stream (`WebSocketTransport` under a `ClientSession`).
///
/// | request | answer |
/// |---------|--------|
/// | `GET` with `Upgrade: websocket`, `Connection: Upgrade`, a 16-byte `Sec-WebSocket-Key`, version 13 and `xmpp` among the protocols, from an allowed origin | `101` with `Sec-WebSocket-Accept` and `Sec-WebSocket-Protocol: xmpp` |
/// | another `Sec-WebSocket-Version` | `426` naming version 13 |
/// | no `xmpp` among the protocols, a bad key, HTTP/1.0 | `400` |
/// | an `Origin` not in `websocket_origins` (when set) | `403` |
/// | a plain `GET` (no upgrade) | `426` |
/// | any other method | `405` |
///
/// No extension (`Sec-WebSocket-Extensions`) is accepted, so frames carry
/// no compression.
final class WebSocketEndpoint: HTTPResponder {
    /// The path, as RFC 7395 §4 and XEP-0156 examples name it.
    static let path = "/xmpp-websocket"
    /// The key's suffix before hashing (RFC 6455 §1.3).
    static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    private let context: ServerContext
    /// Creates the session that runs over an accepted WebSocket.
    private let startSession: (WebSocketTransport) -> Void

    init(context: ServerContext, startSession: @escaping (WebSocketTransport) -> Void) {
        self.context = context
        self.startSession = startSession
    }

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        switch check(request) {
        case .failure(let refusal):
            context.log.info("WebSocket from \(connection.peer) refused: \(refusal.text)")
            connection.respond(refusal)
        case .success(let accept):
            let log = context.log.labelled("ws \(connection.peer)")
            let peer = connection.peer
            let maxMessageSize = context.config.limits.maxStanzaSizeUnauthenticated
            var accepted: WebSocketTransport?
            connection.upgrade(
                fields: [
                    ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", accept),
                    ("Sec-WebSocket-Protocol", "xmpp"),
                ]
            ) { transport, tls in
                let webSocket = WebSocketTransport(
                    connection: transport, tls: tls, peer: peer, maxMessageSize: maxMessageSize, log: log)
                accepted = webSocket
                return webSocket
            }
            if let accepted { startSession(accepted) }
        }
    }

    /// The handshake's answer: the `Sec-WebSocket-Accept` value, or the
    /// refusal to send.
    func check(_ request: HTTPRequestHead) -> Result<String, HTTPRefusal> {
        guard request.method == "GET" else {
            return .failure(HTTPRefusal(.methodNotAllowed, "a WebSocket opens with GET", fields: [("Allow", "GET")]))
        }
        guard Self.tokens(request, "upgrade").contains("websocket") else {
            return .failure(
                HTTPRefusal(
                    .upgradeRequired, "XMPP over WebSocket (RFC 7395) is served here; connect with a WebSocket",
                    fields: [("Upgrade", "websocket"), ("Connection", "Upgrade")]))
        }
        guard request.minorVersion >= 1, Self.tokens(request, "connection").contains("upgrade") else {
            return .failure(HTTPRefusal(.badRequest, "a WebSocket needs HTTP/1.1 and 'Connection: Upgrade'"))
        }
        guard request[field: "sec-websocket-version"] == "13" else {
            return .failure(
                HTTPRefusal(
                    .upgradeRequired, "WebSocket version 13 only", fields: [("Sec-WebSocket-Version", "13")]))
        }
        guard let key = request[field: "sec-websocket-key"], (try? Base64.decode(key))?.count == 16 else {
            return .failure(HTTPRefusal(.badRequest, "Sec-WebSocket-Key must be 16 bytes in base64"))
        }
        guard Self.tokens(request, "sec-websocket-protocol").contains("xmpp") else {
            return .failure(HTTPRefusal(.badRequest, "the WebSocket subprotocol 'xmpp' is required (RFC 7395)"))
        }
        let origins = context.config.http.webSocketOrigins
        if !origins.isEmpty, let origin = request[field: "origin"]?.lowercased(), !origins.contains(origin) {
            return .failure(HTTPRefusal(.forbidden, "pages from \(origin) may not open a stream here"))
        }
        return .success(Self.acceptValue(for: key))
    }

    /// `Sec-WebSocket-Accept` for `key`: base64 of the SHA-1 of the key and
    /// the GUID (RFC 6455 §4.2.2).
    static func acceptValue(for key: String) -> String {
        Base64.encode(HashFunction.sha1.hash(Array((key + acceptGUID).utf8)))
    }

    /// The comma-separated tokens of every `name` field, lowercased
    /// (`Connection: keep-alive, Upgrade` → keep-alive, upgrade); protocol
    /// names are compared the same way, as clients send `xmpp`.
    private static func tokens(_ request: HTTPRequestHead, _ name: String) -> [String] {
        request.values(of: name).flatMap { $0.split(separator: ",") }.map {
            String($0.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
                .lowercased()
        }
    }
}

/// A request turned away: the status, a text for the client and the log,
/// and any fields the status calls for.
struct HTTPRefusal: Error {
    let status: HTTPStatus
    let text: String
    let fields: [(name: String, value: String)]

    init(_ status: HTTPStatus, _ text: String, fields: [(name: String, value: String)] = []) {
        self.status = status
        self.text = text
        self.fields = fields
    }
}

extension HTTPConnection {
    /// Answers with `refusal`'s status, text and fields.
    func respond(_ refusal: HTTPRefusal) {
        respond(.text(refusal.status, refusal.text, fields: refusal.fields))
    }
}
