import XMPPCore

/// What a login leaves for the rest of `establish`: the features to go on
/// with and whatever was already done inline.
struct LoginResult {
    /// The features after authentication: of the restarted stream (RFC
    /// 6120) or sent right after the SASL2 success.
    var features: Element
    /// The full JID when the session was bound or resumed inline.
    var jid: JID?
    /// The resumed session, when it was resumed inline.
    var resumed: StreamManagementState<Element>?
    /// Whether resumption was asked for inline, so not to ask again.
    var triedResumption = false
    /// The server's answer to stream management enabled inline.
    var streamManagementAnswer: Element?
    /// Whether carbons were enabled inline.
    var carbonsEnabled = false
}

/// Logging in: XEP-0388 (SASL2) with Bind 2, FAST and inline resumption
/// when the server offers it on a TLS stream, else RFC 6120 SASL; and
/// logging out for good by invalidating the FAST token.
extension XMPPClient {
    /// Logs in on a stream whose pre-authentication features are
    /// `features`, resuming `previous` inline when SASL2 allows it. Updates
    /// ``savedLogin``, ``loginDetails`` and the FAST token.
    func logIn(
        _ negotiator: inout StreamNegotiator, _ features: Element, resuming previous: StreamManagementState<Element>?
    ) async throws(XMPPClientError) -> LoginResult {
        guard negotiator.isSecure, let offer = SASL2Offer(features) else {
            let login = try await negotiator.authenticate(
                features, username: account.localpart ?? "", secret: secret)
            remember(
                login,
                details: LoginDetails(
                    profile: .rfc6120, mechanism: login?.mechanism.rawValue ?? SASLMechanism.plain.rawValue,
                    channelBinding: nil, downgradeProtected: false, usedToken: false))
            return LoginResult(features: try await negotiator.openStream())
        }
        var request = sasl2Request(token: fastToken)
        // XEP-0386 makes up the resource from the tag: a resource asked for
        // by name is bound the RFC 6120 way after the login.
        request.bindTag = configuration.resource == nil ? configuration.bindTag : nil
        request.enablesCarbons = configuration.carbons
        request.enablesStreamManagement = configuration.streamManagement
        request.resume = offer.resume ? previous : nil
        request.requestsToken = true
        let outcome: SASL2Outcome
        do {
            outcome = try await negotiator.authenticate(offer, request)
        } catch {
            if negotiator.tokenRejected { discardToken() }
            throw error
        }
        if negotiator.tokenRejected { discardToken() }
        if let token = outcome.token { fastToken = token }
        remember(outcome.savedLogin, details: outcome.details)
        return LoginResult(
            features: outcome.features, jid: outcome.jid, resumed: outcome.resumed,
            triedResumption: request.resume != nil, streamManagementAnswer: outcome.streamManagementAnswer,
            carbonsEnabled: outcome.carbonsEnabled)
    }

    /// Logs this installation out for good: disconnects, then, on a
    /// connection of its own, has the server invalidate the FAST token
    /// (XEP-0484 §3.5) so that a copy of it left anywhere is useless, and
    /// forgets it. The SCRAM keys of ``savedLogin`` stay valid until the
    /// password changes. Without a token, it only disconnects.
    /// - Throws: the connection errors of ``connect()``; the token is
    ///   forgotten even then.
    public func logOut() async throws(XMPPClientError) {
        await disconnect()
        guard let token = fastToken else { return }
        discardToken()
        let transport = try await openTransport()
        transport.setReadTimeout(configuration.timeout)
        do throws(XMPPClientError) {
            var negotiator = StreamNegotiator(transport: transport, account: account)
            var features = try await negotiator.openStream()
            features = try await negotiator.secure(features, trust: configuration.tlsContext(), required: true)
            guard let offer = SASL2Offer(features) else {
                throw .unsupportedServer("the server no longer offers SASL2, with which tokens are invalidated")
            }
            var request = sasl2Request(token: token)
            request.invalidatesToken = true
            _ = try await negotiator.authenticate(offer, request)
            transport.close(sending: XMLSerializer.streamClosing(negotiator.header))
        } catch {
            transport.abort(error)
            throw error
        }
    }

    /// A SASL2 request with the user agent and `token`, nothing inline.
    private func sasl2Request(token: FASTToken?) -> SASL2Request {
        SASL2Request(
            username: account.localpart ?? "", secret: secret, token: token,
            userAgentID: configuration.userAgentID, software: configuration.software, device: configuration.device)
    }

    /// Keeps what a login leaves: its details, and what to save next time,
    /// that is new SCRAM keys, else the keys saved before, with the
    /// current FAST token.
    private func remember(_ login: SavedLogin?, details: LoginDetails) {
        loginDetails = details
        var configured: SavedLogin?
        if case .saved(let saved) = secret { configured = saved }
        savedLogin = login ?? savedLogin ?? configured
        savedLogin?.fastToken = fastToken
    }

    /// Forgets the FAST token: the server refused it, or it is invalidated.
    private func discardToken() {
        fastToken = nil
        savedLogin?.fastToken = nil
    }
}
