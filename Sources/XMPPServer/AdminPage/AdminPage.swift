import Foundation
import XMPPCore
import XMPPNet

/// The admin web page at `/admin`, for the accounts the `admins` setting
/// names: server status, sessions, accounts, rooms and recent problems,
/// with the actions of `AdminOperations` (the service the ad-hoc
/// commands use too).
///
/// Who gets in, and how:
/// - Only over HTTPS, or over plain HTTP from a loopback address (the
///   plain listeners are loopback-only anyway); anything else gets `403`.
/// - Login with an admin's account and password, checked against the
///   stored SCRAM credentials (`AccountService.verify`) and through the
///   login throttle, like an XMPP login. A wrong password, an unknown
///   account and an account that is no admin get the same answer.
/// - A login is a cookie (`AdminWebSessions`): `HttpOnly`,
///   `SameSite=Strict`, `Path=/admin`, and `Secure` over HTTPS. Over
///   plain loopback HTTP it is not `Secure`, since browsers would drop
///   it there, and the connection does not leave the machine.
/// - Every POST but the login carries the login's form token, and a POST
///   whose `Origin` (when sent) is not this page's gets `403`. GET and
///   HEAD only show.
///
/// | path                      | GET                        | POST                          |
/// |---------------------------|----------------------------|-------------------------------|
/// | `/admin`                  | overview, or the login form| —                             |
/// | `/admin/login`, `/logout` | —                          | log in, log out               |
/// | `/admin/sessions`         | the sessions               | —                             |
/// | `/admin/sessions/end`     | —                          | end a session (`jid`)         |
/// | `/admin/accounts`         | the accounts               | —                             |
/// | `/admin/accounts/add`     | —                          | `account`, `password`         |
/// | `/admin/accounts/delete`  | confirmation (`?account=`) | `account`                     |
/// | `/admin/accounts/password`| —                          | `account`, `password`         |
/// | `/admin/style.css`        | the style sheet            | —                             |
///
/// Confined to the server's loop, like the HTTP connections.
final class AdminPage: HTTPResponder {
    /// Where the page is served; `HTTPRoutes` gives it this path and
    /// everything below `path/`.
    static let path = "/admin"

    let server: ServerContext
    let operations: AdminOperations
    /// The group chat rooms, when the service is on.
    let rooms: MUCRooms?
    let logins: AdminWebSessions

    /// The page for `server`'s admins, listing `rooms` when given.
    init(server: ServerContext, rooms: MUCRooms?) {
        self.server = server
        self.operations = AdminOperations(server: server)
        self.rooms = rooms
        self.logins = AdminWebSessions(registry: server.sessions)
    }

    func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
        let page = request.path.dropFirst(Self.path.count)
        guard connection.isSecure || connection.peer.isLoopback else {
            return connection.respond(
                .text(
                    .forbidden,
                    "The admin page is served over HTTPS (https_listen), or over plain HTTP only to a loopback "
                        + "address: a password and a login cookie must not cross the network in clear text."))
        }
        switch request.method {
        case "GET", "HEAD":
            if page == "/style.css" {
                return connection.respond(
                    HTTPResponse(
                        .ok,
                        fields: [("Content-Type", "text/css; charset=utf-8"), ("X-Content-Type-Options", "nosniff")],
                        body: Array(AdminHTML.styleSheet.utf8)))
            }
            guard let (_, login) = currentLogin(request) else { return connection.respond(loginForm()) }
            show(page, request.query, login, respond: connection.respond)
        case "POST":
            guard originMatches(request, secure: connection.isSecure) else {
                return connection.respond(
                    .text(.forbidden, "the request comes from another site (its Origin is not this page's)"))
            }
            FormBodySink.receive(request, on: connection) { [self] form, respond in
                if page == "/login" { return logIn(form, from: connection.peer, secure: connection.isSecure, respond) }
                guard let (cookie, login) = currentLogin(request) else {
                    return respond(loginForm(status: .forbidden, notice: "You are not logged in (or no longer)."))
                }
                guard let token = form["token"], AdminWebSessions.isFormToken(token, of: login) else {
                    return respond(.text(.forbidden, "the form's token is missing or wrong; reload the page"))
                }
                if page == "/logout" {
                    logins.end(cookie)
                    let expired = cookieField("", secure: connection.isSecure, maxAge: .zero)
                    return respond(loginForm(notice: "Logged out.", isError: false, fields: [expired]))
                }
                act(page, form, login, respond: respond)
            }
        default:
            let allow = [(name: "Allow", value: "GET, HEAD, POST")]
            connection.respond(.text(.methodNotAllowed, "the admin page takes GET, HEAD and POST", fields: allow))
        }
    }

    // MARK: - Login

    /// The login form, with a notice.
    func loginForm(
        status: HTTPStatus = .ok, notice: String? = nil, isError: Bool = true,
        fields: [(name: String, value: String)] = []
    ) -> HTTPResponse {
        let form = """
            <form method="post" action="\(Self.path)/login">\
            \(AdminHTML.input("Account", name: "username", autocomplete: "username"))\
            \(AdminHTML.input("Password", name: "password", type: "password", autocomplete: "current-password"))\
            <button type="submit">Log in</button></form>
            <p>For the accounts the <code>admins</code> setting names.</p>

            """
        return AdminHTML.page(
            "Log in", status: status, formToken: nil,
            notice: notice.map { AdminHTML.Notice(text: $0, isError: isError) },
            body: form, fields: fields)
    }

    /// Checks a login form through the login throttle: at once, after the
    /// throttle's wait, or not at all when its next slots are taken.
    private func logIn(
        _ form: FormFields, from peer: SocketAddress, secure: Bool, _ respond: @escaping (HTTPResponse) -> Void
    ) {
        let given = form["username"] ?? ""
        let password = form["password"] ?? ""
        let username = try? Username.of(account: given, domain: server.domain)
        let host = peer.ipString
        let check = { [self] in
            verify(username, given: given, password: password, host: host, secure: secure, respond)
        }
        switch server.loginThrottle.admit(host: host, account: username ?? given, now: server.loop.now) {
        case .now:
            check()
        case .after(let wait):
            server.log.notice("admin page: login from \(host) throttled: checked in \(wait)")
            _ = server.loop.scheduleTimer(after: wait, check)
        case .busy(let retryAfter):
            respond(
                loginForm(status: .serviceUnavailable, notice: "Too many failed logins; try again in \(retryAfter)."))
        }
    }

    /// Checks the password against the stored credentials; only an admin
    /// with the right password gets a login.
    private func verify(
        _ username: String?, given: String, password: String, host: String, secure: Bool,
        _ respond: @escaping (HTTPResponse) -> Void
    ) {
        // An invalid name is still looked up (and found nowhere), so that
        // its answer takes as long as a wrong password's.
        server.accounts.verify(username: username ?? given, password: password, on: server.loop) { [self] result in
            switch result {
            case .success(.some) where username.map(server.config.admins.contains) == true:
                let username = username!
                server.loginThrottle.succeeded(account: username)
                let (cookie, login) = logins.start(username, now: server.loop.now)
                server.log.notice("admin page: \(username)@\(server.domain) logged in from \(host)")
                show(
                    "", nil, login, fields: [cookieField(cookie, secure: secure, maxAge: AdminWebSessions.maxLifetime)],
                    respond: respond)
            case .success:
                server.loginThrottle.failed(host: host, account: username, now: server.loop.now)
                server.log.notice("admin page: failed login as \(given) from \(host)")
                respond(loginForm(status: .forbidden, notice: "Wrong username or password."))
            case .failure(let error):
                server.log.error("admin page: account lookup failed: \(error)")
                respond(loginForm(status: .internalServerError, notice: "The accounts cannot be read; see the log."))
            }
        }
    }

    /// The login the request's cookie names, if live, with the cookie.
    private func currentLogin(_ request: HTTPRequestHead) -> (cookie: String, login: AdminWebSessions.Login)? {
        for field in request.values(of: "cookie") {
            for pair in field.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == AdminWebSessions.cookieName
                else { continue }
                let cookie = parts[1].trimmingCharacters(in: .whitespaces)
                if let login = logins.login(cookie, now: server.loop.now) { return (cookie, login) }
            }
        }
        return nil
    }

    /// The `Set-Cookie` field for `value`, kept `maxAge` by the browser
    /// (zero deletes it).
    private func cookieField(_ value: String, secure: Bool, maxAge: Duration) -> (name: String, value: String) {
        let attributes = "Path=\(Self.path); Max-Age=\(maxAge.components.seconds); HttpOnly; SameSite=Strict"
        return ("Set-Cookie", "\(AdminWebSessions.cookieName)=\(value); \(attributes)\(secure ? "; Secure" : "")")
    }

    /// Whether the request's `Origin`, when it has one, is the page's own:
    /// the scheme of the connection and the request's `Host` (RFC 6454
    /// §7). A repeated `Origin`, or `null`, does not match.
    func originMatches(_ request: HTTPRequestHead, secure: Bool) -> Bool {
        let origins = request.values(of: "origin")
        guard !origins.isEmpty else { return true }
        guard origins.count == 1, let host = request[field: "host"] else { return false }
        let scheme = secure ? "https" : "http"
        return Self.withoutDefaultPort(origins[0], scheme: scheme)
            == Self.withoutDefaultPort("\(scheme)://\(host)", scheme: scheme)
    }

    /// `origin` in lower case, without the scheme's default port.
    private static func withoutDefaultPort(_ origin: String, scheme: String) -> String {
        let lowered = origin.lowercased()
        let defaultPort = scheme == "https" ? ":443" : ":80"
        return lowered.hasSuffix(defaultPort) ? String(lowered.dropLast(defaultPort.count)) : lowered
    }
}
