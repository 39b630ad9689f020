import Foundation
import XMPPCore
import XMPPStorage

/// XEP-0484 (FAST) on the session: the Hashed Token mechanisms as a
/// SASL2 login, and the tokens a successful SASL2 login hands out.
extension ClientSession {
    /// The FAST mechanisms this stream can run, channel-bound first: those
    /// whose binding TLS supplies here, and `-NONE`; none without TLS or
    /// with `fast_token_lifetime = 0`.
    var offeredFASTMechanisms: [FASTMechanism] {
        guard isSecure, server.fastTokens.lifetime > .zero else { return [] }
        return [.sha256Exporter, .sha256ServerEndPoint, .sha256None].filter { mechanism in
            mechanism.channelBinding.map { channelBindings[$0] != nil } ?? true
        }
    }

    /// The inline `<fast/>` of SASL2's feature; nil without mechanisms.
    var fastFeature: Element? {
        let mechanisms = offeredFASTMechanisms
        guard !mechanisms.isEmpty else { return nil }
        return Element(
            "fast", namespace: NS.fast,
            children: mechanisms.map { .element(Element("mechanism", namespace: NS.fast, children: [.text($0.rawValue)])) })
    }

    /// A login with a FAST token: one message, checked against the tokens
    /// of the client's `<user-agent id/>`, throttled like a password. The
    /// success carries the server's proof that it knows the token too.
    func startFAST(_ mechanism: FASTMechanism, payload: [UInt8]?) {
        guard offeredFASTMechanisms.contains(mechanism) else {
            return saslFailed(.invalidMechanism, reason: "mechanism \(mechanism.rawValue) is not offered")
        }
        guard let request = sasl.request, let userAgent = request.userAgent else {
            return saslFailed(.malformedRequest, reason: "a FAST login needs <user-agent id='…'/>")
        }
        guard let payload else { return saslFailed(.malformedRequest, reason: "a FAST login needs an initial response") }
        let username: String
        let proof: [UInt8]
        do {
            (username, proof) = try HashedToken.parseInitiator(payload, mechanism)
        } catch {
            return saslFailed(error, reason: "bad \(mechanism.rawValue) message")
        }
        let binding = mechanism.channelBinding.flatMap { channelBindings[$0] } ?? []
        let tokens = server.fastTokens
        let now = server.wallClock.date
        sasl.step = .checkingToken
        whenAdmitted(username) { session in
            session.accountRevocations = session.server.sessions.revocationCount(of: username)
            session.withStorage({ stores in
                try tokens.check(
                    proof, mechanism, channelBinding: binding, username: username, userAgent: userAgent,
                    invalidate: request.invalidatesToken, now: now, in: stores)
            }) { result in
                guard session.phase == .negotiating else { return }
                switch result {
                case .success(.accepted(let token, let nonce, let rotate)):
                    session.sasl.step = .idle
                    session.sasl.boundChannel = mechanism.channelBinding
                    // An invalidated token is gone: nothing to check again.
                    session.sasl.verified = request.invalidatesToken ? nil : .token(nonce: nonce, userAgent: userAgent)
                    if rotate, !request.invalidatesToken { session.sasl.request?.rotatedToken = mechanism }
                    if request.invalidatesToken { session.log.info("FAST token of \(username) invalidated at its owner's request") }
                    let answer = HashedToken.responderMessage(mechanism, token: token, channelBinding: binding)
                    session.authenticated(as: username, mechanism: mechanism.rawValue, success: answer)
                case .success(.wrong):
                    session.saslFailed(.notAuthorized, reason: "wrong FAST token for \(username)", account: username)
                case .success(.none):
                    session.saslFailed(
                        .credentialsExpired, reason: "no valid FAST token for this client of \(username)", account: username)
                case .failure(let error):
                    session.log.error("FAST token lookup failed: \(error)")
                    session.saslFailed(.temporaryAuthFailure, reason: "storage error", countsAsFailure: false)
                }
            }
        }
    }

    /// The storage work that completes a successful SASL2 login: checks
    /// that the account still has what the login proved (a password
    /// changed meanwhile leaves the old one nothing), then issues the
    /// token it asked for, or the next one when its FAST token is past
    /// half its life (§3.4).
    /// - Returns: The job; it returns nil when the credential changed,
    ///   else the grant, if a token was issued.
    func completion(for request: SASL2Request) -> @Sendable (Stores) throws -> FASTTokens.Grant?? {
        let (username, verified) = (username ?? "", sasl.verified)
        // A login that invalidated its token (logging out) gets no new one:
        // nothing would be left to check that the account still trusts it.
        var wanted: FASTMechanism? = request.invalidatesToken ? nil : request.requestedToken ?? request.rotatedToken
        if let mechanism = wanted, !offeredFASTMechanisms.contains(mechanism) {
            log.notice("a FAST token for \(mechanism.rawValue), which this stream does not offer, was not issued")
            wanted = nil
        }
        let issue = wanted
        let (tokens, now, userAgent) = (server.fastTokens, server.wallClock.date, request.userAgent)
        return { stores in
            guard try verified?.holds(for: username, in: stores) ?? true else { return nil }
            guard let mechanism = issue, let userAgent else { return .some(nil) }
            return try tokens.issue(mechanism, to: username, userAgent: userAgent, now: now, in: stores)
        }
    }
}
