/// The built-in HTTP server's paths: each feature (uploads, XMPP over
/// WebSocket, discovery, the web chat, the admin page, metrics) answers
/// under its own path, and whatever no feature claims gets `404`.
///
/// A route matches its path exactly, and, when the path ends with `/`,
/// everything below it (`/upload/` matches `/upload/slot/name`).
final class HTTPRoutes: HTTPResponder {
    private var routes: [(path: String, responder: any HTTPResponder)] = []

    /// Sends requests for `path` (and below it, for a path ending with
    /// `/`) to `responder`. The first matching route wins.
    func add(_ path: String, _ responder: any HTTPResponder) {
        precondition(path.hasPrefix("/"), "a route is an absolute path: \(path)")
        routes.append((path, responder))
    }

    /// The paths served, in the order they were added, for the start-up log.
    var paths: [String] { routes.map(\.path) }

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        let path = request.path
        let route = routes.first { route in
            route.path.hasSuffix("/") ? path.hasPrefix(route.path) : path == route.path
        }
        guard let route else { return connection.respond(.text(.notFound, "nothing is served at this path")) }
        route.responder.respond(to: request, on: connection)
    }
}
