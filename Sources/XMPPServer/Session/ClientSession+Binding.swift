import XMPPCore

/// RFC 6120 §7: resource binding.
extension ClientSession {
    /// After SASL and before binding only binding and nonzas that features
    /// accept (stream resumption) are allowed.
    func receiveBeforeBinding(_ element: Element) {
        guard element.namespace == NS.client, element.name == "iq", let iq = IQ(element) else {
            if element.namespace == NS.client {
                return fail(StreamError(.notAuthorized, text: "bind a resource first"))
            }
            return receiveStanzaOrNonza(element)
        }
        switch (iq.type, iq.payload?.namespace, iq.payload?.name) {
        case (.set, NS.bind, "bind"):
            bind(iq)
        case (.result, _, _), (.error, _, _):
            break
        default:
            if let reply = iq.errorReply(StanzaError(.notAuthorized, text: "bind a resource first")) { send(reply) }
        }
    }

    /// Binds the requested resource, or a generated one (RFC 6120 §7.6).
    /// A session already bound to the same full JID is replaced: it gets
    /// the `conflict` stream error (§7.7.2.2).
    ///
    /// COMPAT: XMPPFramework: a bare `conflict` is what stops its reconnect
    /// loop on the old device.
    private func bind(_ iq: IQ) {
        let requested = iq.payload?.childText("resource").flatMap { $0.isEmpty ? nil : $0 }
        switch bindResource(requested ?? Self.generatedResource()) {
        case .failure(let error):
            if let reply = iq.errorReply(error) { send(reply) }
        case .success(let full):
            var bind = Element("bind", namespace: NS.bind)
            var jidElement = Element("jid", namespace: NS.bind)
            jidElement.append(text: full.description)
            bind.append(jidElement)
            send(iq.result(payload: bind))
            server.hooks.sessionBound(self)
        }
    }

    /// Binds `resource` to this session, whether RFC 6120 or Bind 2 asked,
    /// and registers the session; the caller answers, then runs the
    /// `sessionBound` hooks. A session that authenticated before its
    /// account's password changed ends here instead.
    func bindResource(_ resource: String) -> Result<JID, StanzaError> {
        guard let username else { return .failure(StanzaError(.notAuthorized)) }
        let full: JID
        do {
            full = try JID(localpart: username, domainpart: server.domain, resourcepart: resource)
        } catch {
            return .failure(StanzaError(.badRequest, text: "invalid resource: \(error)"))
        }
        jid = full
        let handle = SessionHandle(self)
        let maxResources = server.config.limits.maxResourcesPerAccount
        switch server.sessions.bind(full, handle, revocations: accountRevocations, maxResources: maxResources) {
        case .revoked:
            jid = nil
            fail(StreamError(.notAuthorized, text: "the account's password changed or it was deleted"))
            return .failure(StanzaError(.notAuthorized))
        case .tooManyResources:
            jid = nil
            // RFC 6120 §7.6.2.1: the account has all the resources it may have.
            log.notice("\(full.bare) already has \(maxResources) resources")
            server.metrics.limitsHit.increment(.maxResourcesPerAccount)
            return .failure(
                StanzaError(
                    .resourceConstraint, type: .wait, text: "this account already has \(maxResources) connected resources"))
        case .replaced(let replaced):
            log.info("replacing the earlier session of \(full)")
            replaced.replace()
        case .bound:
            break
        }
        phase = .bound
        handshakeTimer?.cancel()
        handshakeTimer = nil
        // Authentication is over: a bound stream need not keep them.
        streamTLS?.forgetChannelBindings()
        self.handle = handle
        log.info("bound \(full)")
        return .success(full)
    }

    /// A resource for clients that ask the server to choose one: random,
    /// so it never collides with a session that is still open.
    static func generatedResource() -> String {
        "swiftlet-" + Hex.encode(Crypto.randomBytes(count: 6))
    }

    /// Ends this session because another one bound the same full JID.
    func endBecauseReplaced() {
        jid = nil  // the registry already points at the new session
        fail(StreamError(.conflict))
    }
}
