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
            sasl.step = .idle
            saslFailed(.aborted, reason: "client aborted")
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
        if let retryAfter = server.loginThrottle.delay(for: peerHost, now: server.loop.now) {
            return saslFailed(.temporaryAuthFailure, reason: "throttled for \(retryAfter)", countsAsFailure: false)
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
                saslFailed(error, reason: "SCRAM proof rejected for \(username)")
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
        accountRevocations = server.sessions.revocationCount(of: username)
        waitForStorage()
        server.accounts.credentials(for: username, hash, on: server.loop) { [weak self] result in
            guard let self else { return }
            defer { self.resumeAfterWaiting() }
            guard self.phase == .negotiating else { return }
            switch result {
            case .success(let credentials):
                let challenge = scram.challenge(credentials: credentials)
                self.sasl.step = .scram(scram, username: username)
                var element = Element("challenge", namespace: NS.sasl)
                element.append(text: SASLPayload.encode(challenge))
                self.send(element)
            case .failure(let error):
                self.log.error("account lookup failed: \(error)")
                self.saslFailed(.temporaryAuthFailure, reason: "storage error", countsAsFailure: false)
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
        accountRevocations = server.sessions.revocationCount(of: username)
        waitForStorage()
        server.accounts.verify(username: username, password: request.password, on: server.loop) {
            [weak self] result in
            guard let self else { return }
            defer { self.resumeAfterWaiting() }
            guard self.phase == .negotiating else { return }
            switch result {
            case .success(true):
                self.authenticated(as: username, success: nil)
            case .success(false):
                self.saslFailed(.notAuthorized, reason: "wrong password or unknown user \(username)")
            case .failure(let error):
                self.log.error("account lookup failed: \(error)")
                self.saslFailed(.temporaryAuthFailure, reason: "storage error", countsAsFailure: false)
            }
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
        server.loginThrottle.reset(for: peerHost)
        log.info("authenticated as \(username)@\(server.domain)")
        restartStream()
        server.hooks.sessionAuthenticated(self)
    }

    /// Sends `<failure/>` (RFC 6120 §6.5); after too many failures on one
    /// stream the stream itself ends (§6.4.5).
    private func saslFailed(_ condition: SASLFailure, reason: String, countsAsFailure: Bool = true) {
        sasl.step = .idle
        log.notice("authentication failed (\(condition.rawValue)): \(reason)")
        send(Element("failure", namespace: NS.sasl, children: [.element(Element(condition.rawValue, namespace: NS.sasl))]))
        guard countsAsFailure, condition == .notAuthorized || condition == .malformedRequest else { return }
        sasl.failures += 1
        server.loginThrottle.record(for: peerHost, now: server.loop.now)
        if sasl.failures >= server.config.authentication.saslMaxAttempts {
            fail(StreamError(.policyViolation, text: "too many failed authentication attempts"))
        }
    }
}
