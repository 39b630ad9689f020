import Foundation
import XMPPCore

/// What the client asks for in an XEP-0388 `<authenticate/>` besides
/// proving who it is.
struct SASL2Request: Sendable {
    /// The account's username (the JID's localpart).
    var username: String
    /// The password or saved SCRAM keys, for when no token is used.
    var secret: ClientSecret
    /// A FAST token to log in with instead, when the server offers its
    /// mechanism (XEP-0484).
    var token: FASTToken?
    /// Whether this login invalidates `token` (XEP-0484 §3.5): it then
    /// binds nothing, asks for nothing and never falls back to SCRAM.
    var invalidatesToken = false
    /// The XEP-0388 user agent: its stable id, the software and the device.
    var userAgentID: UUID
    var software: String
    var device: String?
    /// The XEP-0386 tag to bind with; `nil` binds nothing inline.
    var bindTag: String?
    /// Whether to enable carbons (XEP-0280) in the inline bind.
    var enablesCarbons = false
    /// Whether to enable stream management (XEP-0198) in the inline bind.
    var enablesStreamManagement = false
    /// A session to resume inline instead of binding, when it can be.
    var resume: StreamManagementState<Element>?
    /// Whether to ask for a FAST token.
    var requestsToken = false
}

/// What an XEP-0388 login achieved.
struct SASL2Outcome: Sendable {
    /// How the client proved who it is.
    var details: LoginDetails
    /// What a SCRAM login leaves to save; `nil` after PLAIN or FAST.
    var savedLogin: SavedLogin?
    /// The full JID bound inline (XEP-0386), or of the resumed session.
    var jid: JID?
    /// The resumed session with the server's count applied.
    var resumed: StreamManagementState<Element>?
    /// The server's `<enabled/>` or `<failed/>` to stream management
    /// asked for in the inline bind; `nil` when it was not asked for.
    var streamManagementAnswer: Element?
    /// Whether carbons were enabled inline.
    var carbonsEnabled = false
    /// A new FAST token, issued or rotated.
    var token: FASTToken?
    /// The features the server sends right after `<success/>` (no restart).
    var features: Element
}

/// XEP-0388 (SASL2) on the client: the best SCRAM mechanism with channel
/// binding (XEP-0440) and downgrade protection (XEP-0474), or a FAST token
/// (XEP-0484), with the session bound (XEP-0386) or resumed (XEP-0198) in
/// the same round trips.
extension StreamNegotiator {
    /// The SCRAM and PLAIN mechanisms in order of preference.
    private static let preference: [SASLMechanism] = [
        .scramSHA256Plus, .scramSHA1Plus, .scramSHA256, .scramSHA1, .plain,
    ]
    /// Channel-binding types in order of preference (RFC 9266 over RFC 5929).
    private static let bindingPreference: [ChannelBindingType] = [.tlsExporter, .tlsServerEndPoint]
    /// FAST mechanisms in order of preference.
    private static let fastPreference: [FASTMechanism] = [.sha256Exporter, .sha256ServerEndPoint, .sha256None]

    /// Logs in with `request.token` when the server offers its mechanism
    /// and TLS supplies its binding; when the server refuses the token (or
    /// it has expired) sets ``tokenRejected`` and logs in with the secret
    /// once, on this stream. Call only on a TLS stream.
    mutating func authenticate(
        _ offer: SASL2Offer, _ request: SASL2Request, isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError)
        -> SASL2Outcome
    {
        let bindings = await transport.channelBindings()
        if let token = request.token {
            let binding: [UInt8]? = if let type = token.mechanism.channelBinding { bindings[type] } else { [] }
            if token.expiry <= Date() {
                tokenRejected = true
            } else if offer.fastMechanisms.contains(token.mechanism), let binding {
                do {
                    return try await fast(token, binding: binding, offer, request)
                } catch .notAuthorized where !request.invalidatesToken {
                    tokenRejected = true
                }
            }
        }
        guard !request.invalidatesToken else {
            throw .unsupportedServer("the token cannot be used here: expired, or its mechanism is not offered")
        }
        return try await scramOrPlain(offer, request, bindings: bindings)
    }

    // MARK: - Mechanisms

    private mutating func fast(
        _ token: FASTToken, binding: [UInt8], _ offer: SASL2Offer, _ request: SASL2Request,
        isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> SASL2Outcome {
        let key = Array(token.token.utf8)
        var fast = Element("fast", namespace: NS.fast)
        if request.invalidatesToken { fast.attributes.append(Attribute("invalidate", "true")) }
        send(
            authenticate(
                token.mechanism.rawValue,
                HashedToken.initiatorMessage(
                    token.mechanism, username: request.username, token: key, channelBinding: binding),
                offer, request, extra: [fast]))
        let success = try await expectSuccess(refusingToken: true)
        guard let data = try? SASLPayload.decode(success.childText("additional-data", namespace: NS.sasl2) ?? ""),
            Crypto.constantTimeEquals(
                data, HashedToken.responderMessage(token.mechanism, token: key, channelBinding: binding))
        else { throw .unsupportedServer("the server did not prove it knows the FAST token") }
        let details = LoginDetails(
            profile: .sasl2, mechanism: token.mechanism.rawValue, channelBinding: token.mechanism.channelBinding,
            downgradeProtected: false, usedToken: true)
        return try await outcome(success, details, offer, request, tokenMechanism: token.mechanism)
    }

    private mutating func scramOrPlain(
        _ offer: SASL2Offer, _ request: SASL2Request, bindings: [ChannelBindingType: [UInt8]],
        isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> SASL2Outcome {
        let (mechanism, binding) = try Self.choose(offer, secret: request.secret, bindings: bindings)
        let requested = request.requestsToken ? Self.tokenMechanism(offer, bindings: bindings) : nil
        let extra =
            requested.map {
                [Element("request-token", namespace: NS.fast, attributes: ["mechanism": $0.rawValue])]
            } ?? []
        guard mechanism == .plain else {
            return try await scram(mechanism, binding, offer, request, extra: extra, tokenMechanism: requested)
        }
        guard case .password(let password) = request.secret else {
            preconditionFailure("PLAIN is chosen only with a password")
        }
        let message: [UInt8]
        do {
            message = try SASLPlain.encode(username: request.username, password: password)
        } catch {
            throw .invalidRequest("the username or password cannot be used: \(error)")
        }
        send(authenticate(mechanism.rawValue, message, offer, request, extra: extra))
        let success = try await expectSuccess()
        let details = LoginDetails(
            profile: .sasl2, mechanism: mechanism.rawValue, channelBinding: nil, downgradeProtected: false,
            usedToken: false)
        return try await outcome(success, details, offer, request, tokenMechanism: requested)
    }

    private mutating func scram(
        _ mechanism: SASLMechanism, _ binding: SCRAMClient.ChannelBinding, _ offer: SASL2Offer,
        _ request: SASL2Request, extra: [Element], tokenMechanism: FASTMechanism?,
        isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> SASL2Outcome {
        let secret: SCRAMClient.Secret =
            switch request.secret {
            case .password(let password): .password(password)
            case .saved(let login): .keys(login.keys)
            }
        var client: SCRAMClient
        let success: Element
        do {
            client = try SCRAMClient(
                mechanism: mechanism, username: request.username, secret: secret, channelBinding: binding)
            client.advertisement = offer.advertisement
            let serverFinal: [UInt8]
            (success, serverFinal) = try await scramRoundTrips(
                &client, authenticate(mechanism.rawValue, client.clientFirstMessage, offer, request, extra: extra),
                namespace: NS.sasl2)
            try client.receiveServerFinal(serverFinal)
        } catch {
            throw Self.clientError(error)
        }
        var channelBinding: ChannelBindingType?
        if case .bound(let type, _) = binding { channelBinding = type }
        let details = LoginDetails(
            profile: .sasl2, mechanism: mechanism.rawValue, channelBinding: channelBinding,
            downgradeProtected: client.advertisementVerified, usedToken: false)
        var result = try await outcome(success, details, offer, request, tokenMechanism: tokenMechanism)
        // The keys are the same with or without channel binding: save the
        // plain mechanism, which any server offering SCRAM takes.
        result.savedLogin = client.keys.map { SavedLogin(mechanism: Self.withoutChannelBinding(mechanism), keys: $0) }
        return result
    }

    /// The best mechanism both sides can run for `secret`, and the
    /// channel binding to run it with.
    static func choose(
        _ offer: SASL2Offer, secret: ClientSecret, bindings: [ChannelBindingType: [UInt8]]
    ) throws(XMPPClientError) -> (SASLMechanism, SCRAMClient.ChannelBinding) {
        let offered = Set(offer.mechanisms)
        let candidates: [SASLMechanism]
        switch secret {
        case .password: candidates = preference
        case .saved(let login): candidates = preference.filter { $0.scramHashFunction == login.keys.hashFunction }
        }
        let serverBinds = offer.mechanisms.contains { SASLMechanism(rawValue: $0)?.usesChannelBinding == true }
        for mechanism in candidates where offered.contains(mechanism.rawValue) {
            guard mechanism.usesChannelBinding else {
                // 'y' tells a server that does bind that someone removed
                // -PLUS from its list (RFC 5802 §6).
                return (mechanism, serverBinds || bindings.isEmpty ? .unsupported : .notOfferedByServer)
            }
            guard let type = bindingPreference.first(where: { offer.acceptsChannelBinding($0) && bindings[$0] != nil }),
                let data = bindings[type]
            else { continue }
            return (mechanism, .bound(type, data: data))
        }
        throw .unsupportedServer("no SASL mechanism in common (offered: \(offer.mechanisms.sorted()))")
    }

    /// The FAST mechanism to ask a token for: the first of ours the server
    /// offers whose channel binding TLS supplies.
    static func tokenMechanism(_ offer: SASL2Offer, bindings: [ChannelBindingType: [UInt8]]) -> FASTMechanism? {
        fastPreference.first { mechanism in
            offer.fastMechanisms.contains(mechanism) && mechanism.channelBinding.map { bindings[$0] != nil } ?? true
        }
    }

    private static func withoutChannelBinding(_ mechanism: SASLMechanism) -> SASLMechanism {
        switch mechanism {
        case .scramSHA256Plus: .scramSHA256
        case .scramSHA1Plus: .scramSHA1
        default: mechanism
        }
    }

    // MARK: - Elements

    /// The `<authenticate/>` request: the mechanism and initial response,
    /// the user agent, then what is done inline.
    private func authenticate(
        _ mechanism: String, _ initialResponse: [UInt8], _ offer: SASL2Offer, _ request: SASL2Request,
        extra: [Element]
    ) -> Element {
        var element = Element("authenticate", namespace: NS.sasl2, attributes: ["mechanism": mechanism])
        element.append(
            Element("initial-response", namespace: NS.sasl2, children: [.text(SASLPayload.encode(initialResponse))]))
        var agent = Element(
            "user-agent", namespace: NS.sasl2, attributes: ["id": request.userAgentID.uuidString.lowercased()])
        agent.append(Element("software", namespace: NS.sasl2, children: [.text(request.software)]))
        if let device = request.device {
            agent.append(Element("device", namespace: NS.sasl2, children: [.text(device)]))
        }
        element.append(agent)
        if !request.invalidatesToken {
            if offer.resume, let previous = request.resume, let id = previous.resumptionID {
                element.append(
                    Element(
                        "resume", namespace: NS.sm, attributes: ["previd": id, "h": String(previous.handledInbound)]))
            }
            if offer.bind, let tag = request.bindTag { element.append(bind(tag, offer, request)) }
        }
        for child in extra { element.append(child) }
        return element
    }

    /// The XEP-0386 bind request with the features to enable in it.
    private func bind(_ tag: String, _ offer: SASL2Offer, _ request: SASL2Request) -> Element {
        var bind = Element("bind", namespace: NS.bind2)
        bind.append(Element("tag", namespace: NS.bind2, children: [.text(tag)]))
        if request.enablesCarbons, offer.bindFeatures.contains(NS.carbons) {
            bind.append(Element("enable", namespace: NS.carbons))
        }
        if request.enablesStreamManagement, offer.bindFeatures.contains(NS.sm) {
            bind.append(Element("enable", namespace: NS.sm, attributes: ["resume": "true"]))
        }
        return bind
    }

    // MARK: - Replies

    /// The next element, which must be SASL2 `<success/>`. With
    /// `refusingToken`, any `<failure/>` but `temporary-auth-failure` is
    /// `.notAuthorized`: XEP-0484 §4 has the client drop a token the
    /// server refused, whatever the condition.
    private mutating func expectSuccess(
        refusingToken: Bool = false, isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> Element {
        let reply = try await reader.nextElement()
        do {
            try checkNotFailure(reply, namespace: NS.sasl2)
        } catch .unsupportedServer where refusingToken {
            throw .notAuthorized
        }
        guard reply.name == "success", reply.namespace == NS.sasl2 else {
            throw .unsupportedServer("unexpected SASL2 reply <\(reply.name)>")
        }
        return reply
    }

    /// Reads what `<success/>` says of the session and the features that
    /// follow it.
    private mutating func outcome(
        _ success: Element, _ details: LoginDetails, _ offer: SASL2Offer, _ request: SASL2Request,
        tokenMechanism: FASTMechanism?, isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> SASL2Outcome {
        let identity =
            (success.childText("authorization-identifier", namespace: NS.sasl2)
            ?? success.childText("authorization-identity", namespace: NS.sasl2)).flatMap { try? JID($0) }
        let features = try await reader.nextElement()
        guard features.name == "features", features.namespace == NS.streams else {
            throw .unsupportedServer("expected stream features after the SASL2 success, got <\(features.name)>")
        }
        var result = SASL2Outcome(details: details, features: features)
        result.token = success.child("token", namespace: NS.fast).flatMap { element in
            tokenMechanism.flatMap { FASTToken(element, mechanism: $0) }
        }
        if let previous = request.resume, let answer = success.child("resumed", namespace: NS.sm) {
            result.resumed = try Self.resumed(previous, answer)
            result.jid = result.resumed == nil ? nil : identity
        }
        if let bound = success.child("bound", namespace: NS.bind2) {
            guard let identity, identity.resourcepart != nil else {
                throw .unsupportedServer("the SASL2 success binds no full JID")
            }
            result.jid = identity
            result.carbonsEnabled = request.enablesCarbons && offer.bindFeatures.contains(NS.carbons)
            if request.enablesStreamManagement, offer.bindFeatures.contains(NS.sm) {
                result.streamManagementAnswer =
                    bound.child("enabled", namespace: NS.sm) ?? Element("failed", namespace: NS.sm)
            }
        }
        return result
    }
}
