import Foundation
import XMPPCore
import XMPPStorage

/// The SASL exchange in progress on one stream, and the failures so far.
struct SASLState {
    enum Step {
        case idle
        /// `<auth/>` came without an initial response; we sent an empty
        /// challenge and wait for the client's first message.
        case awaitingInitialResponse(SASLMechanism)
        /// SCRAM: server-first sent, waiting for client-final.
        case scram(SCRAMServer, username: String)
        /// A FAST token is being checked (XEP-0484).
        case checkingToken
    }

    var step = Step.idle
    var failures = 0
    /// The mechanism the client asked for last, for the metrics.
    var mechanism: String?
    /// The XEP-0388 request of the exchange in progress; `nil` while the
    /// exchange is RFC 6120's.
    var request: SASL2Request?
    /// The channel binding the successful exchange used, for the log.
    var boundChannel: ChannelBindingType?
    /// What the successful exchange was checked against, checked again
    /// when SASL2 completes (`ClientSession+SASL2`).
    var verified: VerifiedCredential?
}

/// Where a session keeps its `SASLState` while it needs one.
final class SASLStateStorage {
    var state = SASLState()
}

/// What a login proved knowledge of: SCRAM credentials, or a FAST token.
/// A SASL2 login is completed, and a token issued, only while the account
/// still has it, so that a password changed (or an account deleted and
/// registered again) during the exchange leaves the old secret nothing.
enum VerifiedCredential: Sendable {
    /// The StoredKey of the credentials for this hash.
    case scram(HashFunction, storedKey: [UInt8])
    /// The FAST token with this nonce, of this client.
    case token(nonce: [UInt8], userAgent: String)

    /// Whether the account `username` still has it.
    func holds(for username: String, in stores: Stores) throws -> Bool {
        switch self {
        case .scram(let hash, let storedKey):
            return try stores.accounts.credentials(of: username, for: hash)?.storedKey == storedKey
        case .token(let nonce, let userAgent):
            return try stores.fastTokens.tokens(of: username, userAgent: userAgent, at: .distantPast)
                .contains { $0.nonce == nonce }
        }
    }
}

/// RFC 6120 §6 and XEP-0388: SASL negotiation on the server, with
/// SCRAM-SHA-256, SCRAM-SHA-1, their `-PLUS` variants and PLAIN over TLS.
/// Both profiles share the mechanisms; `ClientSession+SASL2` adds what
/// XEP-0388 wraps around them.
extension ClientSession {
    /// The mechanisms this stream offers, strongest first: the `-PLUS`
    /// ones when TLS can bind them (RFC 5802 §6), PLAIN only over TLS (a
    /// password must never cross the network in the clear). The list
    /// depends only on whether the stream is encrypted, so a client that
    /// saw a mechanism once finds it again.
    var offeredMechanisms: [SASLMechanism] {
        guard isSecure else { return [.scramSHA256, .scramSHA1] }
        let plus: [SASLMechanism] = channelBindings.isEmpty ? [] : [.scramSHA256Plus, .scramSHA1Plus]
        return plus + [.scramSHA256, .scramSHA1, .plain]
    }

    /// The channel-binding data TLS can supply on this stream, by type
    /// (XEP-0440): `tls-server-end-point` always, `tls-exporter` with TLS
    /// 1.3 or the extended master secret.
    var channelBindings: [ChannelBindingType: [UInt8]] {
        streamTLS?.channelBindings ?? [:]
    }

    /// The XEP-0440 `<sasl-channel-binding/>` feature, listing
    /// `channelBindings`; nil without TLS.
    var channelBindingFeature: Element? {
        let types = channelBindings.keys.map(\.rawValue).sorted()
        guard !types.isEmpty else { return nil }
        return Element(
            "sasl-channel-binding", namespace: NS.saslChannelBinding,
            children: types.map {
                .element(Element("channel-binding", namespace: NS.saslChannelBinding, attributes: ["type": $0]))
            })
    }

    /// What the client saw advertised for the profile in use, which the
    /// SCRAM server-first message hashes for XEP-0474.
    private var advertisement: SCRAMDowngradeProtection.Advertisement {
        let types = channelBindings.keys.map(\.rawValue)
        return SCRAMDowngradeProtection.Advertisement(
            mechanisms: offeredMechanisms.map(\.rawValue), channelBindings: types.isEmpty ? nil : types)
    }

    /// Handles `<auth/>`, `<response/>` and `<abort/>` (RFC 6120 §6.4).
    func receiveSASL(_ element: Element) {
        switch element.name {
        case "auth":
            receiveAuth(element)
        case "response":
            receiveResponse(element)
        case "abort":
            abortExchange()
        default:
            fail(StreamError(.unsupportedStanzaType, text: "unexpected <\(element.name)/> in SASL"))
        }
    }

    /// `<abort/>`, in either profile: counts as a failure.
    func abortExchange() {
        var account: String?
        if case .scram(_, let username) = sasl.step { account = username }
        saslFailed(.aborted, reason: "client aborted", account: account)
    }

    private func receiveAuth(_ element: Element) {
        let payload: [UInt8]?
        do {
            payload = try SASLPayload.decode(element.text)
        } catch {
            return saslFailed(error, reason: "initial response is not base64")
        }
        begin(element[attribute: "mechanism"], payload: payload)
    }

    /// Starts an exchange with the mechanism the client named, in either
    /// profile: at once with its initial response, or after an empty
    /// challenge asking for it.
    func begin(_ name: String?, payload: [UInt8]?) {
        sasl.mechanism = name
        guard case .idle = sasl.step else {
            sasl.step = .idle
            return saslFailed(.malformedRequest, reason: "a new exchange during an exchange")
        }
        guard allowsCredentials else {
            return saslFailed(.encryptionRequired, reason: "authentication before STARTTLS")
        }
        if let name, let fast = FASTMechanism(rawValue: name), sasl.request != nil {
            return startFAST(fast, payload: payload)
        }
        guard let name, let mechanism = SASLMechanism(rawValue: name), offeredMechanisms.contains(mechanism) else {
            if name == SASLMechanism.plain.rawValue {
                return saslFailed(.encryptionRequired, reason: "PLAIN without TLS")
            }
            return saslFailed(.invalidMechanism, reason: "mechanism \(name ?? "(none)") is not offered")
        }
        guard let payload else {
            sasl.step = .awaitingInitialResponse(mechanism)
            return sendChallenge([])
        }
        start(mechanism, with: payload)
    }

    /// Sends a challenge in the profile of the exchange.
    private func sendChallenge(_ data: [UInt8]) {
        if sasl.request != nil {
            send(Element("challenge", namespace: NS.sasl2, children: [.text(Base64.encode(data))]))
        } else {
            var element = Element("challenge", namespace: NS.sasl)
            if !data.isEmpty { element.append(text: SASLPayload.encode(data)) }
            send(element)
        }
    }

    private func receiveResponse(_ element: Element) {
        let payload: [UInt8]
        do {
            payload = try SASLPayload.decode(element.text) ?? []
        } catch {
            sasl.step = .idle
            return saslFailed(error, reason: "response is not base64")
        }
        continueExchange(with: payload)
    }

    /// Takes the client's response to our last challenge, in either profile.
    func continueExchange(with payload: [UInt8]) {
        switch sasl.step {
        case .idle, .checkingToken:
            saslFailed(.malformedRequest, reason: "a response without an exchange")
        case .awaitingInitialResponse(let mechanism):
            sasl.step = .idle
            start(mechanism, with: payload)
        case .scram(var scram, let username):
            sasl.step = .idle
            do {
                let serverFinal = try scram.receiveClientFinal(payload)
                sasl.boundChannel = scram.boundChannel
                authenticated(as: username, mechanism: scram.mechanism.rawValue, success: serverFinal)
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
            mechanism: mechanism, channelBindings: channelBindings, unknownUserSecret: server.scramSecret,
            unknownUserIterations: server.config.authentication.scramIterations, advertisement: advertisement)
        let identity: SASLIdentity
        do {
            identity = try scram.receiveClientFirst(payload)
        } catch {
            // A -PLUS attempt with a binding we lack (slixmpp sends
            // tls-unique, or 'n') tests no password: the client retries
            // with another mechanism, and must not be throttled for it.
            return saslFailed(
                error, reason: "bad SCRAM client-first message", countsAsFailure: !mechanism.usesChannelBinding)
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
                    session.sasl.verified = credentials.map { .scram(hash, storedKey: $0.storedKey) }
                    session.sendChallenge(challenge)
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
                case .success(let credentials?):
                    session.sasl.verified = .scram(.sha256, storedKey: credentials.storedKey)
                    session.authenticated(as: username, mechanism: SASLMechanism.plain.rawValue, success: nil)
                case .success(nil):
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
    func whenAdmitted(_ username: String, _ attempt: @escaping (ClientSession) -> Void) {
        switch server.loginThrottle.admit(host: peerHost, account: username, now: server.loop.now) {
        case .now:
            attempt(self)
        case .after(let wait):
            log.notice("login as \(username) throttled: checked in \(wait)")
            server.metrics.limitsHit.increment(.loginThrottle)
            postponeHandshakeDeadline(by: wait)
            waiting(for: { done in _ = schedule(after: wait) { _ in done(()) } }) { [self] in
                guard phase == .negotiating else { return }
                attempt(self)
            }
        case .busy(let retryAfter):
            server.metrics.limitsHit.increment(.loginThrottle)
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

    /// The exchange succeeded. RFC 6120: sends `<success/>` (with SCRAM's
    /// `v=` inside, which XMPPFramework requires) and expects a new stream
    /// (§6.4.6). XEP-0388: completes the request, inline features and all.
    /// - Parameter success: The mechanism's additional data, if any.
    func authenticated(as username: String, mechanism: String, success: [UInt8]?) {
        // First to the loop of the account's other sessions, where
        // resumption and binding find them.
        moveHome(of: username) { $0.completeAuthentication(as: username, mechanism: mechanism, success: success) }
    }

    private func completeAuthentication(as username: String, mechanism: String, success: [UInt8]?) {
        guard server.sessions.revocationCount(of: username) == accountRevocations else {
            return saslFailed(.notAuthorized, reason: "the password of \(username) changed during the exchange", account: username)
        }
        self.username = username
        phase = .authenticated
        parser.limits = server.authenticatedLimits
        (transport as? WebSocketTransport)?.maxMessageSize = server.config.limits.maxStanzaSize
        server.loginThrottle.succeeded(account: username)
        server.metrics.logins.increment(LoginMechanism(mechanism))
        clientSoftware = sasl.request?.software
        let client = clientSoftware.map { ", client \($0)" } ?? ""
        log.info("authenticated as \(username)@\(server.domain) with \(mechanism)\(channelBindingNote(mechanism))\(client)")
        if let request = sasl.request {
            sasl.request = nil
            server.hooks.sessionAuthenticated(self)
            return completeSASL2(request, additionalData: success)
        }
        var element = Element("success", namespace: NS.sasl)
        if let success { element.append(text: SASLPayload.encode(success)) }
        send(element)
        restartStream()
        server.hooks.sessionAuthenticated(self)
    }

    /// ", bound to tls-exporter" and the like, for the log line of a
    /// login whose mechanism binds the channel.
    private func channelBindingNote(_ mechanism: String) -> String {
        guard mechanism.hasSuffix("-PLUS") || mechanism.hasPrefix("HT-") else { return "" }
        return sasl.boundChannel.map { ", bound to \($0.rawValue)" } ?? ""
    }

    /// Sends `<failure/>` (RFC 6120 §6.5); after too many failures on one
    /// stream the stream itself ends (§6.4.5). A wrong password, a broken
    /// exchange and an abort count, for the stream and for the login
    /// throttle (against `account` too, when the attempt named one), since
    /// an abort ends an attempt as unfinished as a failed one.
    ///
    /// XEP-0388's `<failure/>` adds the reason as `<text/>`, except for
    /// `not-authorized`, where it would tell a wrong password from an
    /// unknown user; the request's inline features are dropped with it.
    func saslFailed(
        _ condition: SASLFailure, reason: String, account: String? = nil, countsAsFailure: Bool = true
    ) {
        sasl.step = .idle
        sasl.verified = nil
        log.notice("authentication failed (\(condition.rawValue)): \(reason)")
        server.metrics.loginFailures.increment(LoginMechanism(sasl.mechanism))
        let conditionElement = Element(condition.rawValue, namespace: NS.sasl)
        if sasl.request != nil {
            sasl.request = nil
            var failure = Element("failure", namespace: NS.sasl2, children: [.element(conditionElement)])
            if condition != .notAuthorized { failure.append(Element("text", namespace: NS.sasl2, children: [.text(reason)])) }
            send(failure)
        } else {
            send(Element("failure", namespace: NS.sasl, children: [.element(conditionElement)]))
        }
        let counted: [SASLFailure] = [.notAuthorized, .credentialsExpired, .malformedRequest, .aborted]
        guard countsAsFailure, counted.contains(condition) else { return }
        sasl.failures += 1
        server.loginThrottle.failed(host: peerHost, account: account, now: server.loop.now)
        if sasl.failures >= server.config.authentication.saslMaxAttempts {
            server.metrics.limitsHit.increment(.saslMaxAttempts)
            fail(StreamError(.policyViolation, text: "too many failed authentication attempts"))
        }
    }
}
