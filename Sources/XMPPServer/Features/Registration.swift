import XMPPCore

/// XEP-0077: In-Band Registration. Before authentication: the form and
/// account creation (with the `iq-register` stream feature XMPPFramework
/// needs in order to register at all). After it: password change and
/// account removal. The form comes both as the legacy fields and as a data
/// form (§6); either may be submitted, for registration or a new password.
public struct Registration: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.register)
        hooks.streamFeature { session in
            guard session.phase == .negotiating, session.registrationIsOpen,
                session.allowsCredentials
            else { return nil }
            return Element("register", namespace: NS.registerFeature)
        }
        hooks.onIQ(.get, NS.register, "query", to: [.unauthenticated]) { request in
            guard request.session.registrationIsOpen else { throw Self.closed }
            return .result(Self.form)
        }
        hooks.onIQ(.set, NS.register, "query", to: [.unauthenticated], Self.register)
        hooks.onIQ(.get, NS.register, "query", to: [.host, .account]) { request in
            var query = Element("query", namespace: NS.register)
            query.append(Element("registered", namespace: NS.register))
            var username = Element("username", namespace: NS.register)
            username.append(text: request.session.username ?? "")
            query.append(username)
            return .result(query)
        }
        hooks.onIQ(.set, NS.register, "query", to: [.host, .account], Self.changeOrRemove)
    }

    private static let closed = StanzaError(.notAllowed, text: "registration is closed on this server")

    /// The registration form (§3.1): the legacy fields, for XMPPFramework
    /// and older clients, and the same as a data form (§6, `FORM_TYPE`
    /// `jabber:iq:register`), which clients such as Dino need.
    static let form: Element = {
        let instructions = "Choose a username and password."
        var query = Element("query", namespace: NS.register)
        query.append(Element("instructions", namespace: NS.register, children: [.text(instructions)]))
        query.append(Element("username", namespace: NS.register))
        query.append(Element("password", namespace: NS.register))
        let required = [Element("required", namespace: NS.dataForms)]
        var form = DataForm(
            type: "form",
            fields: [
                DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.register]),
                DataForm.Field("username", type: "text-single", label: "Username", extras: required),
                DataForm.Field("password", type: "text-private", label: "Password", extras: required),
            ]
        ).element
        form.children.insert(.element(Element("instructions", namespace: NS.dataForms, children: [.text(instructions)])), at: 0)
        form.children.insert(.element(Element("title", namespace: NS.dataForms, children: [.text("Account registration")])), at: 0)
        query.append(form)
        return query
    }()

    /// Creates an account (XEP-0077 §3.1), answering `conflict` when the
    /// username is taken and `not-acceptable` when it or the password is
    /// unusable.
    ///
    /// Each attempt that reaches storage takes its place in the
    /// registration throttle first, on the loop, whether the name turns out
    /// to be free or not: a conflict costs storage work too, and parallel
    /// requests must not all pass a check made before any was counted.
    @Sendable private static func register(_ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let server = session.server
        guard session.registrationIsOpen else { throw closed }
        let query = request.iq.payload!
        if query.child("remove") != nil {
            throw StanzaError(.notAuthorized, text: "log in to remove an account")
        }
        let (username, password) = try credentials(in: query, domain: server.domain)
        if let wait = server.registrationThrottle.reserve(for: session.peerHost, now: server.loop.now) {
            session.log.notice("registration throttled for \(wait)")
            server.metrics.limitsHit.increment(.registrationThrottle)
            throw StanzaError(.policyViolation, type: .wait, text: "too many registrations; try later")
        }
        return .after({ server.accounts.register(username: username, password: password, on: server.loop, $0) }) {
            registered in
            guard registered else { throw StanzaError(.conflict, text: "that username is taken") }
            session.log.info("registered \(username)@\(server.domain)")
            return .result()
        }
    }

    /// Changes the password (XEP-0077 §3.3) or deletes the account (§3.2).
    @Sendable private static func changeOrRemove(_ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let server = session.server
        let own = try request.username()
        let query = request.iq.payload!
        if query.child("remove") != nil {
            return .after({ server.deleteAccount(own, except: session, then: $0) }) { _ in
                .result { session.fail(StreamError(.notAuthorized, text: "account deleted")) }
            }
        }
        let (username, password) = try credentials(in: query, domain: server.domain)
        guard username == own else { throw StanzaError(.notAllowed, text: "you can only change your own password") }
        return .after({ server.accounts.changePassword(username: own, password: password, on: server.loop, $0) }) {
            _ in
            session.log.info("password changed for \(own)@\(server.domain)")
            server.revokeSessions(of: own, except: session, because: "the password was changed")
            return .result()
        }
    }

    /// The normalized username and the password of a registration: the
    /// submitted data form if there is one (§6: it takes precedence), else
    /// the legacy fields. Anything missing is `not-acceptable` (§3.1).
    private static func credentials(in query: Element, domain: String) throws(StanzaError) -> (String, String) {
        let username: String?
        let password: String?
        if let element = query.child("x", namespace: NS.dataForms) {
            guard let form = DataForm(element), form.type == "submit", form.formType == NS.register else {
                throw StanzaError(.badRequest, text: "the data form must be a submitted \(NS.register) form")
            }
            username = form.fields.first { $0.name == "username" }?.values.first
            password = form.fields.first { $0.name == "password" }?.values.first
        } else {
            username = query.childText("username")
            password = query.childText("password")
        }
        guard let username, let password else {
            throw StanzaError(.notAcceptable, text: "username and password are required")
        }
        try Username.checkPassword(password)
        return (try Username.normalize(username, domain: domain), password)
    }
}

extension ClientSession {
    /// Whether this session may create accounts.
    var registrationIsOpen: Bool { server.config.registration.mode == .open }
}
