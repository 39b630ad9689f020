import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// A response as the admin page tests read it.
struct AdminPageResponse {
    var status: Int
    /// Field names lowercased, every value of each.
    var fields: [String: [String]]
    var body: String

    /// The one value of `name`, or nil.
    subscript(_ name: String) -> String? { fields[name]?.count == 1 ? fields[name]![0] : nil }

    /// The value of the login form token in the page.
    var formToken: String? {
        body.firstMatch(of: #/name="token" value="([A-Za-z0-9_-]+)"/#).map { String($0.1) }
    }
}

/// A test server with the admin page, driven over in-memory HTTP
/// connections: `admin` (password `admin-pw`) is the admin, `romeo`
/// (password `pw`) is not.
final class AdminPageHarness {
    static let loopback = SocketAddress(ip: "127.0.0.1", port: 40000)!

    let server: TestServer
    let page: AdminPage
    /// The login cookie (`name=value`), once logged in.
    var cookie: String?
    /// The current page's form token.
    var token: String?

    init(rooms: MUCRooms? = nil, _ change: (inout ServerConfig) -> Void = { _ in }) throws {
        var config = ServerConfig()
        config.admins = ["admin"]
        change(&config)
        server = try TestServer(config: config)
        try server.addUser("admin", password: "admin-pw")
        try server.addUser("romeo", password: "pw")
        page = AdminPage(server: server.context, rooms: rooms)
    }

    /// Sends `method target` with `fields` and `body` from `peer`, and
    /// reads the answer after the loop has run; nil when there is none yet.
    func send(
        _ method: String, _ target: String, fields: [(String, String)] = [], body: String = "",
        peer: SocketAddress = loopback
    ) -> HTTPConnectionTests.Transport {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost:5280\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        if method == "POST" { head += "Content-Length: \(body.utf8.count)\r\n" }
        let transport = HTTPConnectionTests.Transport()
        let http = HTTPConnection(
            transport: transport, peer: peer, loop: server.loop, responder: page, tls: nil, timeout: .seconds(30),
            log: Logger(level: .error, label: "test", sink: LogRecorder()))
        transport.delegate = http  // keeps it, as a socket's transport does
        let request = Array((head + "\r\n" + body).utf8)
        request.withUnsafeBytes { http.receive($0) }
        server.loop.run()
        return transport
    }

    /// Sends a request and reads the answer.
    func request(
        _ method: String, _ target: String, fields: [(String, String)] = [], body: String = "",
        peer: SocketAddress = loopback
    ) -> AdminPageResponse {
        let transport = send(method, target, fields: fields, body: body, peer: peer)
        return Self.parse(transport.text)
    }

    /// Posts a form (with the login's cookie); `token` is added unless nil.
    func post(
        _ path: String, _ form: [(String, String)], token: String?, fields: [(String, String)] = [],
        peer: SocketAddress = loopback
    ) -> AdminPageResponse {
        let pairs = form + (token.map { [("token", $0)] } ?? [])
        let body = pairs.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        var all = [("Content-Type", "application/x-www-form-urlencoded")] + fields
        if let cookie { all.append(("Cookie", cookie)) }
        let response = request("POST", path, fields: all, body: body, peer: peer)
        if let found = response.formToken { self.token = found }
        return response
    }

    /// Gets a page with the login's cookie.
    func get(_ path: String) -> AdminPageResponse {
        let response = request("GET", path, fields: cookie.map { [("Cookie", $0)] } ?? [])
        if let found = response.formToken { self.token = found }
        return response
    }

    /// Logs in as `username`; keeps the cookie on success.
    @discardableResult
    func logIn(_ username: String = "admin", _ password: String = "admin-pw") -> AdminPageResponse {
        let response = post("/admin/login", [("username", username), ("password", password)], token: nil)
        if let setCookie = response["set-cookie"] { cookie = String(setCookie.prefix { $0 != ";" }) }
        return response
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986 §2.3).
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "-._~").union(.alphanumerics))!
    }

    static func parse(_ text: String) -> AdminPageResponse {
        guard let end = text.range(of: "\r\n\r\n") else { return AdminPageResponse(status: 0, fields: [:], body: "") }
        var lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        let status = Int(lines.removeFirst().split(separator: " ")[1]) ?? 0
        var fields: [String: [String]] = [:]
        for line in lines {
            let colon = line.firstIndex(of: ":")!
            fields[line[..<colon].lowercased(), default: []].append(
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return AdminPageResponse(status: status, fields: fields, body: String(text[end.upperBound...]))
    }
}

/// The admin page without sockets: who gets in, the cookie, CSRF and
/// origin checks, expiry, and each action.
@Suite struct AdminPageTests {
    // MARK: Login

    @Test func anAdminLogsInWithTheRightPassword() throws {
        let admin = try AdminPageHarness()
        let response = admin.logIn()
        #expect(response.status == 200)
        #expect(response.body.contains("<h1>Overview</h1>"))
        #expect(response.body.contains("Swiftlet \(Swiftlet.version)"))
        let cookie = try #require(response["set-cookie"])
        let attributes = cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(attributes[0].hasPrefix("swiftlet_admin="))
        #expect(attributes[0].count == "swiftlet_admin=".count + 43, "32 random bytes in base64url")
        #expect(Set(attributes.dropFirst()) == ["Path=/admin", "Max-Age=43200", "HttpOnly", "SameSite=Strict"])
        #expect(response["x-frame-options"] == "DENY")
        #expect(response["content-security-policy"]?.hasPrefix("default-src 'self'") == true)
        #expect(admin.get("/admin/sessions").body.contains("<h1>Sessions</h1>"), "the cookie lets the admin in")
    }

    @Test func aWrongPasswordAnUnknownUserAndANonAdminGetTheSameAnswer() throws {
        let admin = try AdminPageHarness()
        let wrong = admin.logIn("admin", "guess")
        let unknown = admin.logIn("mallory", "guess")
        let nonAdmin = admin.logIn("romeo", "pw")
        for response in [wrong, unknown, nonAdmin] {
            #expect(response.status == 403)
            #expect(response["set-cookie"] == nil)
            #expect(response.body.contains("Wrong username or password."))
            #expect(response.body == wrong.body)
        }
        #expect(admin.get("/admin").body.contains("<h1>Log in</h1>"), "no cookie, no overview")
    }

    @Test func anAdminMayBeNamedByBareJID() throws {
        let admin = try AdminPageHarness()
        #expect(admin.logIn("admin@localhost", "admin-pw").status == 200)
    }

    @Test func failedLoginsCountForTheLoginThrottle() throws {
        let admin = try AdminPageHarness {
            $0.authentication.loginThrottle = ServerConfig.Throttle(2, per: .seconds(300))
        }
        #expect(admin.logIn("admin", "guess-1").status == 403)
        #expect(admin.logIn("admin", "guess-2").status == 403)
        // The address is full: the next attempt is answered one spacing
        // (150 s) after the failure that filled it, right password or not.
        let transport = admin.send(
            "POST", "/admin/login", fields: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "username=admin&password=admin-pw")
        #expect(transport.written.isEmpty)
        admin.server.loop.advance(by: .seconds(149))
        #expect(transport.written.isEmpty)
        admin.server.loop.advance(by: .seconds(1))
        #expect(AdminPageHarness.parse(transport.text).status == 200)
        // The next attempt waits its slot; one more would wait longer than
        // one spacing: turned away at once.
        #expect(admin.logIn("admin", "guess-3").status == 0, "not answered yet")
        #expect(admin.logIn("admin", "guess-4").status == 503)
    }

    @Test func remotePlainHTTPIsRefused() throws {
        let admin = try AdminPageHarness()
        let remote = SocketAddress(ip: "192.0.2.7", port: 40000)!
        let response = admin.request("GET", "/admin", peer: remote)
        #expect(response.status == 403)
        #expect(response.body.contains("HTTPS"))
        let login = admin.post(
            "/admin/login", [("username", "admin"), ("password", "admin-pw")], token: nil, peer: remote)
        #expect(login.status == 403)
        #expect(login["set-cookie"] == nil)
    }

    @Test func overHTTPSTheCookieIsSecure() throws {
        let admin = try AdminPageHarness()
        let certificate = admin.server.certificate
        let serverTLS = TLSSession(
            context: try TLSContext(
                configuration: .server(
                    certificate: .pem(
                        certificateChain: certificate.certificatePEM, privateKey: certificate.privateKeyPEM))))
        let client = TLSSession(
            context: try TLSContext(configuration: .client(verification: .pinned(certificate.fingerprint))))
        let transport = HTTPConnectionTests.Transport()
        let http = HTTPConnection(
            transport: transport, peer: SocketAddress(ip: "192.0.2.7", port: 40000)!, loop: admin.server.loop,
            responder: admin.page, tls: serverTLS, timeout: .seconds(30),
            log: Logger(level: .error, label: "test", sink: LogRecorder()))
        var received: [UInt8] = try client.receive(ciphertext: [])
        for _ in 0..<10 where !client.isHandshakeComplete {
            client.takeOutput().withUnsafeBytes { http.receive($0) }
            admin.server.loop.run()
            received += try client.receive(ciphertext: transport.written)
            transport.written = []
        }
        #expect(client.isHandshakeComplete)
        let body = "username=admin&password=admin-pw"
        try client.send(
            plaintext: Array(
                ("POST /admin/login HTTP/1.1\r\nHost: localhost\r\nOrigin: https://localhost\r\n"
                    + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                    + body).utf8))
        client.takeOutput().withUnsafeBytes { http.receive($0) }
        admin.server.loop.run()
        received += try client.receive(ciphertext: transport.written)
        let response = AdminPageHarness.parse(String(decoding: received, as: UTF8.self))
        #expect(response.status == 200)
        #expect(response["set-cookie"]?.hasSuffix("; Secure") == true)
    }

    // MARK: Forms

    @Test func aFormWithoutTheRightTokenIsRefused() throws {
        let admin = try AdminPageHarness()
        admin.logIn()
        let missing = admin.post("/admin/accounts/add", [("account", "mercutio"), ("password", "pw")], token: nil)
        #expect(missing.status == 403)
        let wrong = admin.post(
            "/admin/accounts/add", [("account", "mercutio"), ("password", "pw")],
            token: String(repeating: "A", count: 43))
        #expect(wrong.status == 403)
        #expect(admin.get("/admin/accounts").body.contains("romeo@localhost"))
        #expect(!admin.get("/admin/accounts").body.contains("mercutio"), "nothing was added")
    }

    @Test func aFormFromAnotherOriginIsRefused() throws {
        let admin = try AdminPageHarness()
        admin.logIn()
        for origin in ["https://evil.example", "null", "http://localhost:5281", "https://localhost:5280"] {
            let response = admin.post(
                "/admin/accounts/add", [("account", "mercutio"), ("password", "pw")], token: admin.token,
                fields: [("Origin", origin)])
            #expect(response.status == 403, "Origin \(origin)")
        }
        let same = admin.post(
            "/admin/accounts/add", [("account", "mercutio"), ("password", "pw")], token: admin.token,
            fields: [("Origin", "http://LOCALHOST:5280")])
        #expect(same.status == 200)
        #expect(same.body.contains("Added mercutio@localhost."))
    }

    @Test func aFormWithoutALoginIsRefused() throws {
        let admin = try AdminPageHarness()
        let response = admin.post("/admin/accounts/delete", [("account", "romeo")], token: "x")
        #expect(response.status == 403)
        #expect(response.body.contains("not logged in"))
    }

    @Test func aLargeFormIs413() throws {
        let admin = try AdminPageHarness()
        let response = admin.post(
            "/admin/login", [("username", "admin"), ("password", String(repeating: "x", count: FormBodySink.limit))],
            token: nil)
        #expect(response.status == 413)
    }

    @Test func aGetChangesNothing() throws {
        let admin = try AdminPageHarness()
        admin.logIn()
        let confirmation = admin.get("/admin/accounts/delete?account=romeo")
        #expect(confirmation.body.contains("Delete <strong>romeo</strong>"))
        #expect(admin.get("/admin/accounts").body.contains("romeo@localhost"), "still there")
        #expect(admin.request("PUT", "/admin/accounts/delete").status == 405)
    }

    // MARK: Expiry and logout

    @Test func aLoginExpiresWhenIdleAndAfterTwelveHours() throws {
        let admin = try AdminPageHarness()
        admin.logIn()
        admin.server.loop.advance(by: .seconds(3599))
        #expect(admin.get("/admin").body.contains("<h1>Overview</h1>"))
        admin.server.loop.advance(by: .seconds(3600))
        #expect(admin.get("/admin").body.contains("<h1>Log in</h1>"), "an hour idle")

        admin.logIn()
        for _ in 0..<14 {
            admin.server.loop.advance(by: .seconds(3000))
            #expect(admin.get("/admin").body.contains("<h1>Overview</h1>"))
        }
        admin.server.loop.advance(by: .seconds(3000))
        #expect(admin.get("/admin").body.contains("<h1>Log in</h1>"), "twelve hours after login")
    }

    @Test func logoutEndsTheLogin() throws {
        let admin = try AdminPageHarness()
        admin.logIn()
        let response = admin.post("/admin/logout", [], token: admin.token)
        #expect(response.body.contains("Logged out."))
        #expect(response["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(admin.get("/admin").body.contains("<h1>Log in</h1>"))
    }

    // MARK: Actions

    @Test func addingAnAccount() throws {
        let admin = try AdminPageHarness()
        admin.logIn()
        let response = admin.post(
            "/admin/accounts/add", [("account", "mercutio"), ("password", "queen mab")], token: admin.token)
        #expect(response.body.contains("Added mercutio@localhost."))
        #expect(response.body.contains("<td>mercutio@localhost</td>"))
        let mercutio = admin.server.connect()
        _ = try mercutio.login("mercutio", "queen mab")
        let again = admin.post("/admin/accounts/add", [("account", "mercutio"), ("password", "x")], token: admin.token)
        #expect(again.body.contains("class=\"error\">mercutio@localhost already exists"))
    }

    @Test func resettingAPasswordEndsTheSessions() throws {
        let admin = try AdminPageHarness()
        let romeo = admin.server.connect()
        try romeo.login("romeo", "pw")
        admin.logIn()
        let response = admin.post(
            "/admin/accounts/password", [("account", "romeo"), ("password", "new-pw")], token: admin.token)
        #expect(response.body.contains("Changed the password of romeo@localhost"))
        _ = romeo.receiveElements()
        #expect(romeo.isClosed)
        #expect(throws: (any Error).self) { try admin.server.connect().login("romeo", "pw") }
        _ = try admin.server.connect().login("romeo", "new-pw")
    }

    @Test func deletingAnAccountEndsItsSessions() throws {
        let admin = try AdminPageHarness()
        let romeo = admin.server.connect()
        try romeo.login("romeo", "pw", resource: "orchard")
        admin.logIn()
        #expect(admin.get("/admin/sessions").body.contains("<td>orchard</td>"))
        let response = admin.post("/admin/accounts/delete", [("account", "romeo")], token: admin.token)
        #expect(response.body.contains("Deleted romeo@localhost; its sessions ended."))
        _ = romeo.receiveElements()
        #expect(romeo.isClosed)
        #expect(!admin.get("/admin/accounts").body.contains("romeo@localhost"))
        #expect(admin.get("/admin/sessions").body.contains("Nobody is connected."))
    }

    @Test func endingASession() throws {
        let admin = try AdminPageHarness()
        let phone = admin.server.connect()
        try phone.login("romeo", "pw", resource: "phone")
        let laptop = admin.server.connect()
        try laptop.login("romeo", "pw", resource: "laptop")
        admin.logIn()
        let response = admin.post("/admin/sessions/end", [("jid", "romeo@localhost/phone")], token: admin.token)
        #expect(response.body.contains("Ended the session of romeo@localhost/phone."))
        _ = phone.receiveElements()
        _ = laptop.receiveElements()
        #expect(phone.isClosed)
        #expect(!laptop.isClosed, "only the one session")
        #expect(
            admin.get("/admin/accounts").body.contains("<td>1 <form method=\"post\" action=\"/admin/sessions/end\""))
        let all = admin.post("/admin/sessions/end", [("jid", "romeo@localhost")], token: admin.token)
        #expect(all.body.contains("Ended the session of romeo@localhost."))
        _ = laptop.receiveElements()
        #expect(laptop.isClosed)
    }

    @Test func changingTheAdminsOwnPasswordEndsTheLogin() throws {
        let admin = try AdminPageHarness()
        admin.logIn()
        let response = admin.post(
            "/admin/accounts/password", [("account", "admin"), ("password", "next")], token: admin.token)
        #expect(response.body.contains("log in with the new one"))
        #expect(admin.get("/admin").body.contains("<h1>Log in</h1>"))
        #expect(admin.logIn("admin", "next").status == 200)
    }

    // MARK: Escaping and status

    @Test func hostileNamesAreEscaped() throws {
        let admin = try AdminPageHarness()
        let romeo = admin.server.connect()
        try romeo.login("romeo", "pw", resource: "&lt;script&gt;alert(1)&lt;/script&gt;&amp;quot;")
        admin.logIn()
        let sessions = admin.get("/admin/sessions").body
        #expect(sessions.contains("<td>&lt;script&gt;alert(1)&lt;/script&gt;&amp;quot;</td>"))
        #expect(!sessions.contains("<script>"))
        #expect(sessions.contains("value=\"romeo@localhost/&lt;script&gt;alert(1)&lt;/script&gt;&amp;quot;\""))
        let confirmation = admin.get("/admin/accounts/delete?account=%22%3E%3Cimg%20src%3Dx%3E").body
        #expect(confirmation.contains("&quot;&gt;&lt;img src=x&gt;"))
        #expect(!confirmation.contains("<img"))
    }

    @Test func theOverviewShowsRecentProblems() throws {
        let admin = try AdminPageHarness()
        admin.server.context.log.warning("disk <almost> full")
        admin.server.context.log.info("not a problem")
        admin.logIn()
        let overview = admin.get("/admin").body
        #expect(overview.contains("warning test: disk &lt;almost&gt; full"))
        #expect(!overview.contains("not a problem"))
        #expect(overview.contains("swiftlet.sqlite") == false, "in-memory storage has no files")
        #expect(overview.contains("<th>Uploaded files</th>"))
    }

    @Test func theOverviewListsRoomsWhenThereAreAny() throws {
        let rooms = MultiUserChat(config: ServerConfig()).rooms
        let without = try AdminPageHarness(rooms: rooms)
        without.logIn()
        #expect(!without.get("/admin").body.contains("<h2>Rooms</h2>"))

        var configuration = MUCRoomConfiguration(maxUsers: 100, historyLength: 20)
        configuration.name = "<b>Garden</b>"
        configuration.persistent = true
        rooms.restore([
            MUCRoom(
                jid: try JID("garden@conference.localhost"), creator: try JID("romeo@localhost"),
                configuration: configuration, occupantIDs: rooms.occupantIDs)
        ])
        let admin = try AdminPageHarness(rooms: rooms)
        admin.logIn()
        let overview = admin.get("/admin").body
        #expect(overview.contains("<h2>Rooms</h2>"))
        #expect(overview.contains("<td>garden@conference.localhost</td><td>&lt;b&gt;Garden&lt;/b&gt;</td><td>0</td>"))
    }

    @Test func theStyleSheetNeedsNoLogin() throws {
        let admin = try AdminPageHarness()
        let response = admin.request("GET", "/admin/style.css")
        #expect(response.status == 200)
        #expect(response["content-type"] == "text/css; charset=utf-8")
    }
}
