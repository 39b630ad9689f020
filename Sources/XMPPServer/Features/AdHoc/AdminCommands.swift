import XMPPCore

/// XEP-0133: Service Administration, the commands of this server: node
/// names, forms and field `var`s as the XEP gives them, each carried out by
/// `AdminOperations`.
enum AdminCommands {
    static let all: [AdHocCommand] = [
        addUser, deleteUser, changeUserPassword, endUserSession, registeredUsersNumber, registeredUsersList,
        onlineUsersNumber, onlineUsersList, announce,
    ]

    /// The node of the XEP-0133 command `name`.
    static func node(_ name: String) -> String { "\(NS.admin)#\(name)" }

    /// §4.1: creates an account.
    static let addUser = AdHocCommand(
        node: node("add-user"), name: "Add a user",
        form: .init(
            title: "Adding a user", instructions: "Fill out this form to add a user.",
            fields: accountAndPassword("The JID of the account to add", "The password for this account")
                + [.init("password-verify", type: "text-private", label: "Retype password")])
    ) { form, request in
        let (account, password) = try accountAndPassword(in: form!)
        let verify = form!.values("password-verify").first ?? password
        return { completion in
            guard verify == password else {
                return completion(.success(.init(notes: [.init(kind: .error, text: "The passwords do not match")])))
            }
            AdminOperations(server: request.server).addAccount(account, password: password) { result in
                completion(result.map { .init(notes: [.init(kind: .info, text: "Account \($0) added")]) })
            }
        }
    }

    /// §4.2: deletes accounts, ending their sessions.
    static let deleteUser = eachAccountCommand(
        "delete-user", name: "Delete users", title: "Deleting users", label: "The JIDs of the accounts to delete"
    ) { operations, account, completion in
        operations.deleteAccount(account) { result in completion(result.map { "\($0) deleted" }) }
    }

    /// §4.5: ends every session of accounts, or single sessions (full
    /// JIDs).
    static let endUserSession = eachAccountCommand(
        "end-user-session", name: "End user sessions", title: "Ending user sessions",
        label: "The JIDs whose sessions to end"
    ) { operations, account, completion in
        operations.endSessions(of: account) { result in completion(result.map { "\(account): \($0) session(s) ended" }) }
    }

    /// §4.7: sets an account's password, ending its sessions (but the
    /// admin's own) and its FAST tokens.
    static let changeUserPassword = AdHocCommand(
        node: node("change-user-password"), name: "Change a user's password",
        form: .init(
            title: "Changing a user's password", instructions: "Fill out this form to change a user's password.",
            fields: accountAndPassword("The JID of the account", "The new password"))
    ) { form, request in
        let (account, password) = try accountAndPassword(in: form!)
        return { completion in
            AdminOperations(server: request.server).resetPassword(account, password: password, keeping: request.session) {
                result in
                completion(result.map { .init(notes: [.init(kind: .info, text: "Password of \($0) changed")]) })
            }
        }
    }

    /// §4.16: how many accounts there are.
    static let registeredUsersNumber = AdHocCommand(
        node: node("get-registered-users-num"), name: "Get the number of registered users", form: nil
    ) { _, request in
        { completion in
            AdminOperations(server: request.server).accountCount { result in
                completion(result.map { resultForm("registeredusersnum", "The number of registered users", [String($0)]) })
            }
        }
    }

    /// §4.18: how many accounts have a session.
    static let onlineUsersNumber = AdHocCommand(
        node: node("get-online-users-num"), name: "Get the number of online users", form: nil
    ) { _, request in
        { completion in
            AdminOperations(server: request.server).onlineSessions { sessions in
                let users = onlineAccounts(sessions).count
                completion(.success(resultForm("onlineusersnum", "The number of online users", [String(users)])))
            }
        }
    }

    /// §4.21: the accounts, up to `max_items`.
    static let registeredUsersList = listCommand("get-registered-users-list", "registered users", "registereduserjids") {
        operations, completion in
        operations.accounts { completion($0.map { $0.map(\.description) }) }
    }

    /// §4.22: the accounts with a session, up to `max_items`.
    static let onlineUsersList = listCommand("get-online-users-list", "online users", "onlineuserjids") {
        operations, completion in
        operations.onlineSessions { completion(.success(onlineAccounts($0).map(\.description))) }
    }

    /// §4.23: a message to every online user.
    static let announce = AdHocCommand(
        node: node("announce"), name: "Send an announcement to all online users",
        form: .init(
            title: "Making an announcement", instructions: "Fill out this form to make an announcement to all online users.",
            fields: [.init("announcement", type: "text-multi", label: "Announcement", extras: [required])])
    ) { form, request in
        let text = form!.values("announcement").joined(separator: "\n")
        guard !text.isEmpty else { throw AdHocError.badPayload("the field announcement is required") }
        return { completion in
            AdminOperations(server: request.server).announce(text) { result in
                completion(result.map { .init(notes: [.init(kind: .info, text: "Announcement sent to \($0) session(s)")]) })
            }
        }
    }

    // MARK: - Pieces

    /// A command of §4.21 or §4.22: its form asks for `max_items`, and its
    /// result lists, in the `jid-multi` field `field`, the first
    /// `max_items` of the JIDs `list` completes with.
    private static func listCommand(
        _ name: String, _ users: String, _ field: String,
        _ list: @escaping @Sendable (AdminOperations, @escaping (Result<[String], any Error>) -> Void) -> Void
    ) -> AdHocCommand {
        AdHocCommand(
            node: node(name), name: "Get the list of \(users)",
            form: .init(
                title: "Requesting the list of \(users)", instructions: "How many users should the list show?",
                fields: [maxItems])
        ) { form, request in
            let limit = try maximum(form!)
            return { completion in
                list(AdminOperations(server: request.server)) { result in
                    completion(result.map { listResult(field, "The \(users)", $0, limit: limit) })
                }
            }
        }
    }

    /// The accounts with a session among `sessions`, in their order.
    private static func onlineAccounts(_ sessions: [OnlineSession]) -> [JID] {
        sessions.map(\.jid.bare).uniqued()
    }

    /// `<required/>` of XEP-0004 §3.2.
    private static let required = Element("required", namespace: NS.dataForms)

    /// `max_items` of §4.21 and §4.22, with the XEP's choices.
    private static let maxItems = DataForm.Field.listSingle(
        "max_items", label: "Maximum number of items to show", "25",
        options: ["25", "50", "75", "100", "150", "200"].map { ($0, $0) } + [("none", "None")])

    /// The submitted `max_items`: nil for `none` (or none given).
    private static func maximum(_ form: DataForm) throws(StanzaError) -> Int? {
        guard let value = form.values("max_items").first, value != "none" else { return nil }
        guard let limit = Int(value), limit > 0 else { throw AdHocError.badPayload("max_items must be a number or none") }
        return limit
    }

    /// A command whose form takes `accountjids` (XEP-0133 §4.2, §4.5) and
    /// that runs `operation` on each in turn (`forEach`).
    private static func eachAccountCommand(
        _ command: String, name: String, title: String, label: String,
        _ operation: @escaping @Sendable (AdminOperations, String, @escaping (Result<String, any Error>) -> Void) -> Void
    ) -> AdHocCommand {
        AdHocCommand(
            node: node(command), name: name,
            form: .init(
                title: title, instructions: "Fill out this form, one JID a line.",
                fields: [.init("accountjids", type: "jid-multi", label: label, extras: [required])])
        ) { form, request in
            let operations = AdminOperations(server: request.server)
            return forEach(try accounts(form!)) { operation(operations, $0, $1) }
        }
    }

    /// The required fields `accountjid` and `password` (XEP-0133 §4.1,
    /// §4.7), labelled.
    private static func accountAndPassword(_ accountLabel: String, _ passwordLabel: String) -> [DataForm.Field] {
        [
            .init("accountjid", type: "jid-single", label: accountLabel, extras: [required]),
            .init("password", type: "text-private", label: passwordLabel, extras: [required]),
        ]
    }

    /// The `accountjid` and `password` of a submitted form.
    private static func accountAndPassword(in form: DataForm) throws(StanzaError) -> (String, String) {
        (try form.required("accountjid"), try form.required("password"))
    }

    /// The `accountjids` of a submitted form.
    private static func accounts(_ form: DataForm) throws(StanzaError) -> [String] {
        let accounts = form.values("accountjids")
        guard !accounts.isEmpty else { throw AdHocError.badPayload("the field accountjids is required") }
        return accounts
    }

    /// A result form with the one field `name`.
    private static func resultForm(_ name: String, _ label: String, _ values: [String], type: String? = nil)
        -> AdHocCommand.Outcome
    {
        .init(form: AdHocCommand.adminForm(type: "result", [.init(name, type: type, label: label, values: values)]))
    }

    /// A result form listing `values` in the `jid-multi` field `name`, the
    /// first `limit` of them, with a note when some were left out.
    private static func listResult(_ name: String, _ label: String, _ values: [String], limit: Int?) -> AdHocCommand.Outcome {
        var outcome = resultForm(name, label, Array(values.prefix(limit ?? .max)), type: "jid-multi")
        if let limit, values.count > limit {
            outcome.notes.append(.init(kind: .info, text: "Showing \(limit) of \(values.count)"))
        }
        return outcome
    }

    /// Runs `operation` on each of `accounts` in turn, and notes for each
    /// what became of it: the text the operation completes with, or the
    /// reason it failed.
    private static func forEach(
        _ accounts: [String], _ operation: @escaping (String, @escaping (Result<String, any Error>) -> Void) -> Void
    ) -> AdHocCommand.Operation {
        { completion in
            var notes: [AdHocCommand.Note] = []
            func next(_ remaining: ArraySlice<String>) {
                guard let account = remaining.first else { return completion(.success(.init(notes: notes))) }
                operation(account) { result in
                    switch result {
                    case .success(let text): notes.append(.init(kind: .info, text: text))
                    case .failure(let error as AdminOperationError): notes.append(.init(kind: .error, text: error.description))
                    case .failure(let error): return completion(.failure(error))
                    }
                    next(remaining.dropFirst())
                }
            }
            next(accounts[...])
        }
    }
}
