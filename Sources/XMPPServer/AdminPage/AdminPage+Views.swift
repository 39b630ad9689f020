import Foundation
import XMPPCore
import XMPPStorage

/// The admin page's views: what a GET shows, or what an action shows
/// after it is done. None of them changes anything.
extension AdminPage {
    /// Answers with the view `page` (a path below `/admin`) for `login`,
    /// after a storage round trip where the view needs one.
    func show(
        _ page: Substring, _ query: Substring?, _ login: AdminWebSessions.Login, notice: AdminHTML.Notice? = nil,
        fields: [(name: String, value: String)] = [], respond: @escaping (HTTPResponse) -> Void
    ) {
        let token = login.formToken
        let answer = { (title: String, body: String) in
            respond(AdminHTML.page(title, formToken: token, notice: notice, body: body, fields: fields))
        }
        switch page {
        case "", "/":
            overview { answer("Overview", $0) }
        case "/sessions":
            operations.onlineSessions { [self] sessions in answer("Sessions", sessionsTable(sessions, token)) }
        case "/accounts":
            operations.accounts { [self] result in
                switch result {
                case .success(let accounts): answer("Accounts", accountsView(accounts, token))
                case .failure(let error): answer("Accounts", storageFailure(error))
                }
            }
        case "/accounts/delete":
            let account = query.flatMap { FormFields(decoding: Array($0.utf8)) }?["account"] ?? ""
            answer("Delete an account", deletionConfirmation(account, token))
        default:
            respond(notFound(login))
        }
    }

    /// The answer for a path below `/admin` that is no view or action.
    func notFound(_ login: AdminWebSessions.Login) -> HTTPResponse {
        AdminHTML.page(
            "Not found", status: .notFound, formToken: login.formToken,
            body: "<p>The admin page has nothing at this address.</p>\n")
    }

    /// A paragraph about a storage error, which goes to the log.
    func storageFailure(_ error: any Error) -> String {
        server.log.error("admin page: storage failed: \(error)")
        return "<p class=\"error\">Storage failed; the log says why.</p>\n"
    }

    // MARK: - Overview

    /// Server, listeners, storage, rooms and recent problems.
    private func overview(_ completion: @escaping (String) -> Void) {
        let directory = server.config.dataDirectory
        let uploadRoot = server.upload?.files.root
        server.storage.run(
            on: server.loop,
            { stores in
                (try stores.accounts.accountCount(), StorageSizes(dataDirectory: directory, uploads: uploadRoot))
            }
        ) { [self] result in
            switch result {
            case .success(let (accounts, sizes)):
                completion(
                    serverFacts(accounts: accounts) + listenerFacts() + storageFacts(sizes) + roomsTable() + problems())
            case .failure(let error):
                completion(storageFailure(error))
            }
        }
    }

    private func serverFacts(accounts: Int) -> String {
        let uptime = server.started.duration(to: server.loop.now)
        let started = server.wallClock.date.addingTimeInterval(-Double(uptime.components.seconds))
        return "<h2>Server</h2>\n"
            + AdminHTML.facts([
                ("Domain", AdminHTML.escape(server.domain)),
                ("Version", "Swiftlet \(AdminHTML.escape(Swiftlet.version))"),
                ("Started", AdminHTML.escape(Self.format(started))),
                ("Uptime", AdminHTML.escape(Self.format(uptime))),
                ("Sessions", "\(server.sessions.count)"),
                ("Accounts", "\(accounts)"),
                ("Admin page logins", "\(logins.count)"),
            ])
    }

    private func listenerFacts() -> String {
        let config = server.config
        func list(_ addresses: [ListenAddress]) -> String {
            addresses.isEmpty ? "none" : AdminHTML.escape(addresses.map(\.description).joined(separator: ", "))
        }
        return "<h2>Listeners (as configured) and TLS</h2>\n"
            + AdminHTML.facts([
                ("XMPP (STARTTLS)", list(config.listen)),
                ("XMPP (direct TLS)", list(config.directTLSListen)),
                ("HTTP", list(config.http.listen)),
                ("HTTPS", list(config.http.tlsListen)),
                ("TLS policy", AdminHTML.escape(config.effectiveTLSPolicy.description)),
                ("WebSocket", config.http.webSocket ? "on" : "off"),
                ("File upload", config.upload.enabled ? AdminHTML.escape(config.uploadService) : "off"),
            ])
    }

    private func storageFacts(_ sizes: StorageSizes) -> String {
        "<h2>Storage</h2>\n"
            + AdminHTML.facts(
                sizes.databaseFiles.map { (name, bytes) in (name, AdminHTML.escape(Self.format(bytes: bytes))) }
                    + [
                        (
                            "Uploaded files",
                            sizes.uploads.map { AdminHTML.escape(Self.format(bytes: $0)) } ?? "upload off"
                        )
                    ])
    }

    /// The group chat rooms, when there are any.
    private func roomsTable() -> String {
        guard let rooms = rooms?.all, !rooms.isEmpty else { return "" }
        let rows = rooms.map { room in
            [
                AdminHTML.escape(room.jid.description), AdminHTML.escape(room.configuration.name),
                "\(room.occupants.count)", room.configuration.persistent ? "yes" : "no",
                room.configuration.isPublic ? "yes" : "no", room.configuration.membersOnly ? "yes" : "no",
                room.isLocked ? "yes" : "no",
            ]
        }
        return "<h2>Rooms</h2>\n"
            + AdminHTML.table(
                ["Room", "Name", "Occupants", "Persistent", "Public", "Members only", "Locked"], rows, empty: "")
    }

    /// The last warnings and errors of the log.
    private func problems() -> String {
        let lines = server.log.recentProblems.lines
        let header = "<h2>Recent warnings and errors</h2>\n"
        guard !lines.isEmpty else { return header + "<p>None since the start.</p>\n" }
        return header + "<pre>"
            + lines.reversed().map { AdminHTML.escape("\(Self.format($0.date))  \($0.text)") }.joined(separator: "\n")
            + "</pre>\n"
    }

    // MARK: - Sessions and accounts

    private func sessionsTable(_ sessions: [OnlineSession], _ token: String) -> String {
        let rows = sessions.map { session in
            [
                AdminHTML.escape(session.jid.bare.description), AdminHTML.escape(session.resource),
                AdminHTML.escape(session.clientSoftware ?? ""), AdminHTML.escape(session.peerAddress),
                AdminHTML.escape(Self.format(session.since)), session.isSecure ? "yes" : "no",
                session.streamManagement ? (session.isDetached ? "detached" : "yes") : "no",
                AdminHTML.form(
                    "sessions/end", formToken: token, fields: AdminHTML.hidden("jid", session.jid.description),
                    button: "End session"),
            ]
        }
        return AdminHTML.table(
            ["Account", "Resource", "Client", "Address", "Since", "TLS", "Stream management", ""], rows,
            empty: "Nobody is connected.")
    }

    private func accountsView(_ accounts: [JID], _ token: String) -> String {
        let add = AdminHTML.form(
            "accounts/add", formToken: token,
            fields: AdminHTML.input("Account", name: "account", autocomplete: "off")
                + AdminHTML.input("Password", name: "password", type: "password", autocomplete: "new-password"),
            button: "Add account")
        let rows = accounts.map { account in
            let name = account.localpart ?? ""
            let query = "account=" + (name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            return [
                AdminHTML.escape(account.description) + (server.config.admins.contains(name) ? " (admin)" : ""),
                sessionCount(of: account, token),
                AdminHTML.form(
                    "accounts/password", formToken: token,
                    fields: AdminHTML.hidden("account", name)
                        + AdminHTML.input(
                            "New password", name: "password", type: "password", autocomplete: "new-password"),
                    button: "Reset password"),
                "<a href=\"\(Self.path)/accounts/delete?\(AdminHTML.escape(query))\">Delete…</a>",
            ]
        }
        return "<h2>Add an account</h2>\n" + add + "\n<h2>All accounts (\(accounts.count))</h2>\n"
            + AdminHTML.table(["Account", "Sessions", "Password", ""], rows, empty: "There are no accounts.")
    }

    /// How many sessions `account` has, with a button to end them all.
    private func sessionCount(of account: JID, _ token: String) -> String {
        let count = server.sessions.sessions(of: account).count
        guard count > 0 else { return "0" }
        return "\(count) "
            + AdminHTML.form(
                "sessions/end", formToken: token, fields: AdminHTML.hidden("jid", account.description),
                button: "End all", inline: true)
    }

    private func deletionConfirmation(_ account: String, _ token: String) -> String {
        """
        <p>Delete <strong>\(AdminHTML.escape(account))</strong> with everything stored for it (roster, \
        offline messages, archive, files)? Its sessions end, and its contacts are told.</p>
        \(AdminHTML.form(
            "accounts/delete", formToken: token, fields: AdminHTML.hidden("account", account), button: "Delete"))
        <p><a href="\(Self.path)/accounts">Cancel</a></p>

        """
    }

    // MARK: - Formatting

    /// `2026-12-02T04:55:01Z` (ISO 8601, UTC).
    static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// `2 d 3 h 4 min 5 s`, leaving out leading zero units.
    static func format(_ duration: Duration) -> String {
        let seconds = max(0, duration.components.seconds)
        let parts = [
            (seconds / 86400, "d"), (seconds / 3600 % 24, "h"), (seconds / 60 % 60, "min"), (seconds % 60, "s"),
        ]
        let shown = parts.drop { $0.0 == 0 }.map { "\($0.0) \($0.1)" }
        return shown.isEmpty ? "0 s" : shown.joined(separator: " ")
    }

    /// `1.5 MiB`, in binary units.
    static func format(bytes: Int) -> String {
        var value = Double(bytes)
        for unit in ["bytes", "KiB", "MiB", "GiB"] {
            if value < 1024 || unit == "GiB" {
                return unit == "bytes" ? "\(bytes) bytes" : String(format: "%.1f \(unit)", value)
            }
            value /= 1024
        }
        return "\(bytes) bytes"
    }
}

/// What storage takes on disk: the SQLite files and the uploaded files.
struct StorageSizes: Sendable {
    /// The database, its write-ahead log and its shared memory, by file
    /// name, in bytes (a file that does not exist is left out).
    var databaseFiles: [(String, Int)]
    /// The bytes under the upload directory; nil when upload is off.
    var uploads: Int?

    /// Measures the files of `dataDirectory` and, when given, everything
    /// under `uploads` (a walk of the directory: run it off the loop).
    init(dataDirectory: String, uploads: String?) {
        let files = FileManager.default
        databaseFiles = ["", "-wal", "-shm"].compactMap { suffix in
            let name = Storage.fileName + suffix
            let size = (try? files.attributesOfItem(atPath: "\(dataDirectory)/\(name)"))?[.size] as? Int
            return size.map { (name, $0) }
        }
        self.uploads = uploads.map { root in
            var total = 0
            guard let walk = files.enumerator(atPath: root) else { return 0 }
            for case let path as String in walk {
                let attributes = try? files.attributesOfItem(atPath: "\(root)/\(path)")
                if attributes?[.type] as? FileAttributeType == .typeRegular { total += attributes?[.size] as? Int ?? 0 }
            }
            return total
        }
    }
}
