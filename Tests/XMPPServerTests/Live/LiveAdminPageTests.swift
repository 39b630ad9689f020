import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

/// The admin page of a real `swiftletd` over loopback HTTP: an admin logs
/// in, sees a connected client's session, deletes its account, and the
/// client is disconnected.
@Suite(.timeLimit(.minutes(2)))
struct LiveAdminPageTests {
    @Test func anAdminDeletesTheAccountOfAConnectedClient() throws {
        let dataDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-admin-page-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        try SwiftletdProcess.addUser("admin", password: "admin-pw", dataDirectory: dataDirectory)
        try SwiftletdProcess.addUser("romeo", password: "montague", dataDirectory: dataDirectory)
        let configPath = "\(dataDirectory)/swiftletd.conf"
        try "admins = admin\n".write(toFile: configPath, atomically: true, encoding: .utf8)
        let daemon = try SwiftletdProcess(dataDirectory: dataDirectory, arguments: ["--config", configPath])
        defer { daemon.kill() }
        let line = try #require(daemon.output.split(separator: "\n").first { $0.contains("HTTP on 127.0.0.1:") })
        let http = try #require(SocketAddress(String(line.split(separator: "HTTP on ").last!)))

        let romeo = try daemon.connectWithTLS()
        try romeo.login("romeo", "montague", resource: "balcony")

        let login = try post(http, "/admin/login", "username=admin&password=admin-pw", cookie: nil)
        #expect(login.status == 200)
        let cookie = try #require(login.fields["set-cookie"]?.split(separator: ";").first.map(String.init))

        let sessions = try LiveHTTPClient.exchange(http, "GET", "/admin/sessions", fields: [("Cookie", cookie)])
        let page = String(decoding: sessions.body, as: UTF8.self)
        #expect(page.contains("<td>romeo@localhost</td><td>balcony</td>"))
        let token = try #require(page.firstMatch(of: #/name="token" value="([A-Za-z0-9_-]+)"/#)?.1)

        let deleted = try post(http, "/admin/accounts/delete", "account=romeo&token=\(token)", cookie: cookie)
        #expect(String(decoding: deleted.body, as: UTF8.self).contains("Deleted romeo@localhost"))
        let events = try romeo.readUntilClosed()
        #expect(events.contains { "\($0)".contains("not-authorized") }, "the stream ends with not-authorized")

        let after = try LiveHTTPClient.exchange(http, "GET", "/admin/sessions", fields: [("Cookie", cookie)])
        #expect(String(decoding: after.body, as: UTF8.self).contains("Nobody is connected."))
    }

    @Test(arguments: [(["admin"], true, 200), ([], true, 404), (["admin"], false, 404)])
    func thePageIsServedForAdminsWhenOn(admins: [String], on: Bool, status: Int) throws {
        try LiveServer.run(configure: {
            $0.admins = admins
            $0.http.adminPage = on
        }) { server in
            for path in ["/admin", "/admin/sessions"] {
                let response = try LiveHTTPClient.exchange(server.server.httpAddresses[0], "GET", path)
                #expect(response.status == status, "\(path) with admins \(admins), admin_page \(on)")
            }
        }
    }

    /// Posts `form` from this page's own origin.
    private func post(_ http: SocketAddress, _ path: String, _ form: String, cookie: String?) throws -> LiveHTTPResponse
    {
        var fields = [
            ("Content-Type", "application/x-www-form-urlencoded"), ("Content-Length", String(form.utf8.count)),
            ("Origin", "http://localhost"),
        ]
        if let cookie { fields.append(("Cookie", cookie)) }
        return try LiveHTTPClient.exchange(http, "POST", path, fields: fields, body: Array(form.utf8))
    }
}
