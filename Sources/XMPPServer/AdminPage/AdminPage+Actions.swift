import XMPPCore

/// The admin page's actions: each a POST whose form was checked (login,
/// token, origin) before it gets here, carried out through
/// `AdminOperations`, then answered with the view it belongs to and a
/// notice of how it went.
extension AdminPage {
    /// Carries out the action `page` (a path below `/admin`) with `form`.
    func act(
        _ page: Substring, _ form: FormFields, _ login: AdminWebSessions.Login,
        respond: @escaping (HTTPResponse) -> Void
    ) {
        let account = form["account"] ?? ""
        let password = form["password"] ?? ""
        /// Shows `view` with how `result` went (`done` tells a success).
        func answer<Value>(_ view: Substring, _ result: Result<Value, any Error>, _ done: (Value) -> String) {
            let notice: AdminHTML.Notice
            switch result {
            case .success(let value):
                notice = AdminHTML.Notice(text: done(value), isError: false)
            case .failure(let error as AdminOperationError):
                notice = AdminHTML.Notice(text: error.description, isError: true)
            case .failure(let error):
                server.log.error("admin page: \(page) failed: \(error)")
                notice = AdminHTML.Notice(text: "That failed in storage; the log says why.", isError: true)
            }
            show(view, nil, login, notice: notice, respond: respond)
        }
        server.log.notice("admin page: \(login.username)@\(server.domain) asks for \(page) \(form["jid"] ?? account)")
        switch page {
        case "/sessions/end":
            let jid = form["jid"] ?? ""
            operations.endSessions(of: jid) { result in
                answer("/sessions", result) { ended in
                    switch ended {
                    case 0: "\(jid) was not connected (any more)."
                    case 1: "Ended the session of \(jid)."
                    default: "Ended the \(ended) sessions of \(jid)."
                    }
                }
            }
        case "/accounts/add":
            operations.addAccount(account, password: password) { result in
                answer("/accounts", result) { "Added \($0)." }
            }
        case "/accounts/delete":
            operations.deleteAccount(account) { [self] result in
                guard case .success(let jid) = result, jid.localpart == login.username else {
                    return answer("/accounts", result) { "Deleted \($0); its sessions ended." }
                }
                respond(loginForm(notice: "You deleted your own account \(jid).", isError: false))
            }
        case "/accounts/password":
            operations.resetPassword(account, password: password) { [self] result in
                guard case .success(let jid) = result, jid.localpart == login.username else {
                    return answer("/accounts", result) { "Changed the password of \($0); its sessions ended." }
                }
                respond(loginForm(notice: "Your password was changed; log in with the new one.", isError: false))
            }
        default:
            respond(notFound(login))
        }
    }
}
