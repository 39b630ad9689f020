import XMPPCore

/// The SASL exchange in progress on one stream, and the failures so far.
struct SASLState {
    enum Step {
        case idle
        /// `<auth/>` came without an initial response; we sent an empty
        /// challenge and wait for the client's first message.
        case awaitingInitialResponse(SASLMechanism)
        /// SCRAM: server-first sent, waiting for client-final.
        case scram(SCRAMServer, username: String)
    }

    var step = Step.idle
    var failures = 0
}

/// RFC 6120 §6: SASL negotiation on the server, with SCRAM-SHA-256,
/// SCRAM-SHA-1 and (over TLS only) PLAIN.
extension ClientSession {
    /// The mechanisms this stream offers, strongest first. PLAIN only over
    /// TLS: a password must never cross the network in the clear.
    var offeredMechanisms: [SASLMechanism] {
        isSecure ? [.scramSHA256, .scramSHA1, .plain] : [.scramSHA256, .scramSHA1]
    }

    /// Handles `<auth/>`, `<response/>` and `<abort/>` (RFC 6120 §6.4).
    func receiveSASL(_ element: Element) {
        switch element.name {
        case "auth":
            receiveAuth(element)
        case "response":
            receiveResponse(element)
        case "abort":
            var account: String?
            if case .scram(_, let username) = sasl.step { account = username }
            saslFailed(.aborted, reason: "client aborted", account: account)
        default:
            fail(StreamError(.unsupportedStanzaType, text: "unexpected <\(element.name)/> in SASL"))
        }
    }

    private func receiveAuth(_ element: Element) {
        guard case .idle = sasl.step else {
            sasl.step = .idle
            return saslFailed(.malformedRequest, reason: "<auth/> during an exchange")
        }
        guard isSecure || !server.tlsRequired else {
            return saslFailed(.encryptionRequired, reason: "authentication before STARTTLS")
        }
        guard let name = element[attribute: "mechanism"], let mechanism = SASLMechanism(rawValue: name),
            offeredMechanisms.contains(mechanism)
        else {
            if element[attribute: "mechanism"] == SASLMechanism.plain.rawValue {
                return saslFailed(.encryptionRequired, reason: "PLAIN without TLS")
            }
            return saslFailed(.invalidMechanism, reason: "mechanism \(element[attribute: "mechanism"] ?? "(none)")")
        }
        let payload: [UInt8]?
        do {
            payload = try SASLPayload.decode(element.text)
        } catch {
            return saslFailed(error, reason: "initial response is not base64")
        }
        guard let payload else {
            sasl.step = .awaitingInitialResponse(mechanism)
            return send(Element("challenge", namespace: NS.sasl))
        }
        start(mechanism, with: payload)
    }

    private func receiveResponse(_ element: Element) {
        let payload: [UInt8]
        do {
            payload = try SASLPayload.decode(element.text) ?? []
        } catch {
            sasl.step = .idle
            return saslFailed(error, reason: "response is not base64")
        }
        switch sasl.step {
        case .idle:
            saslFailed(.malformedRequest, reason: "<response/> without <auth/>")
        case .awaitingInitialResponse(let mechanism):
            sasl.step = .idle
            start(mechanism, with: payload)
        case .scram(var scram, let username):
            sasl.step = .idle
            do {
                let serverFinal = try scram.receiveClientFinal(payload)
                authenticated(as: username, success: serverFinal)
            } catch {
                saslFailed(error, reason: "SCRAM proof rejected for \(username)", account: username)
            }
        }
    }

    private func start(_ mechanism: SASLMechanism, with payload: [UInt8]) {
        if mechanism == .plain {
            return startPlain(payload)
        }
        var scram = SCRAMServer(
            mechanism: mechanism, unknownUserSecret: server.scramSecret,
            unknownUserIterations: server.config.authentication.scramIterations)
        let identity: SASLIdentity
        do {
            identity = try scram.receiveClientFirst(payload)
        } catch {
            return saslFailed(error, reason: "bad SCRAM client-first message")
        }
        guard authorizationIsOwnAccount(identity) else {
            return saslFailed(.invalidAuthzid, reason: "authzid differs from \(identity.username)")
        }
        let username = identity.username
        let hash = mechanism.scramHashFunction!
        whenAdmitted(username) { session in
            session.accountRevocations = session.server.sessions.revocationCount(of: username)
            let server = session.server
            session.waiting(for: { server.accounts.credentials(for: username, hash, on: server.loop, $0) }) { result in
                guard session.phase == .negotiating else { return }
                switch result {
                case .success(let credentials):
                    let challenge = scram.challenge(credentials: credentials)
                    session.sasl.step = .scram(scram, username: username)
                    var element = Element("challenge", namespace: NS.sasl)
                    element.append(text: SASLPayload.encode(challenge))
                    session.send(element)
                case .failure(let error):
                    session.log.error("account lookup failed: \(error)")
                    session.saslFailed(.temporaryAuthFailure, reason: "storage error", countsAsFailure: false)
                }
            }
        }
    }

    private func startPlain(_ payload: [UInt8]) {
        let request: SASLPlain.Request
        do {
            request = try SASLPlain.parse(payload)
        } catch {
            return saslFailed(error, reason: "bad PLAIN message")
        }
        guard authorizationIsOwnAccount(request.identity) else {
            return saslFailed(.invalidAuthzid, reason: "authzid differs from \(request.identity.username)")
        }
        let username = request.identity.username
        whenAdmitted(username) { session in
            session.accountRevocations = session.server.sessions.revocationCount(of: username)
            let server = session.server
            session.waiting(
                for: { server.accounts.verify(username: username, password: request.password, on: server.loop, $0) }
            ) { result in
                guard session.phase == .negotiating else { return }
                switch result {
                case .success(true):
                    session.authenticated(as: username, success: nil)
                case .success(false):
                    session.saslFailed(
                        .notAuthorized, reason: "wrong password or unknown user \(username)", account: username)
                case .failure(let error):
                    session.log.error("account lookup failed: \(error)")
                    session.saslFailed(.temporaryAuthFailure, reason: "storage error", countsAsFailure: false)
                }
            }
        }
    }

    /// Runs `attempt`, the check of `username`'s credentials, when the login
    /// throttle admits it: at once, or after a wait during which input is
    /// paused and the handshake deadline moves back by the wait (the
    /// client is not to blame for it). An attempt the throttle turns away
    /// fails with `temporary-auth-failure`, unchecked and uncounted.
    private func whenAdmitted(_ username: String, _ attempt: @escaping (ClientSession) -> Void) {
        switch server.loginThrottle.admit(host: peerHost, account: username, now: server.loop.now) {
        case .now:
            attempt(self)
        case .after(let wait):
            log.notice("login as \(username) throttled: checked in \(wait)")
            postponeHandshakeDeadline(by: wait)
            waiting(for: { done in _ = schedule(after: wait) { _ in done(()) } }) { [self] in
                guard phase == .negotiating else { return }
                attempt(self)
            }
        case .busy(let retryAfter):
            saslFailed(.temporaryAuthFailure, reason: "throttled, retry in \(retryAfter)", countsAsFailure: false)
        }
    }

    /// An authorization identity, when given, must be the account itself
    /// (RFC 6120 §6.4.6): we do not let one user act as another.
    private func authorizationIsOwnAccount(_ identity: SASLIdentity) -> Bool {
        guard let authzid = identity.authorizationIdentity, !authzid.isEmpty else { return true }
        guard let jid = try? JID(authzid) else { return false }
        return jid.localpart == identity.username && jid.domainpart == server.domain && jid.resourcepart == nil
    }

    /// Sends `<success/>` (with SCRAM's `v=` inside, which XMPPFramework
    /// requires) and expects a new stream (RFC 6120 §6.4.6).
    private func authenticated(as username: String, success: [UInt8]?) {
        var element = Element("success", namespace: NS.sasl)
        if let success { element.append(text: SASLPayload.encode(success)) }
        send(element)
        self.username = username
        phase = .authenticated
        parser.limits = server.authenticatedLimits
        server.loginThrottle.succeeded(account: username)
        log.info("authenticated as \(username)@\(server.domain)")
        restartStream()
        server.hooks.sessionAuthenticated(self)
    }

    /// Sends `<failure/>` (RFC 6120 §6.5); after too many failures on one
    /// stream the stream itself ends (§6.4.5). A wrong password, a broken
    /// exchange and an abort count, for the stream and for the login
    /// throttle (against `account` too, when the attempt named one), since
    /// an abort ends an attempt as unfinished as a failed one.
    private func saslFailed(
        _ condition: SASLFailure, reason: String, account: String? = nil, countsAsFailure: Bool = true
    ) {
        sasl.step = .idle
        log.notice("authentication failed (\(condition.rawValue)): \(reason)")
        send(Element("failure", namespace: NS.sasl, children: [.element(Element(condition.rawValue, namespace: NS.sasl))]))
        guard countsAsFailure, [.notAuthorized, .malformedRequest, .aborted].contains(condition) else { return }
        sasl.failures += 1
        server.loginThrottle.failed(host: peerHost, account: account, now: server.loop.now)
        if sasl.failures >= server.config.authentication.saslMaxAttempts {
            fail(StreamError(.policyViolation, text: "too many failed authentication attempts"))
        }
    }
}
