import Foundation
import XMPPCore

/// What a client's XEP-0388 `<authenticate/>` asks for besides the login:
/// who it is (`<user-agent/>`), and the features to set up inline once it
/// succeeds (Bind 2, stream resumption, a FAST token).
struct SASL2Request {
    /// The longest `<user-agent id/>` kept; XEP-0388 asks for a UUID.
    static let maximumUserAgentLength = 64
    /// The longest Bind 2 `<tag/>` put in a resource.
    static let maximumTagLength = 64

    /// The client installation's stable id, when it sent a usable one:
    /// FAST tokens and stable resources are bound to it.
    var userAgent: String?
    /// The client software it names (`<software/>`), shortened, for the log.
    var software: String?
    /// The XEP-0386 `<bind/>` request.
    var bind: Element?
    /// The XEP-0198 `<resume/>` request.
    var resume: Element?
    /// The FAST mechanism a new token was asked for (XEP-0484).
    var requestedToken: FASTMechanism?
    /// XEP-0484 `<fast invalidate='true'/>`: the token that logs in ends.
    var invalidatesToken = false
    /// The FAST mechanism of a login whose token is due to be replaced.
    var rotatedToken: FASTMechanism?

    init(_ authenticate: Element) {
        userAgent = authenticate.child("user-agent", namespace: NS.sasl2)?[attribute: "id"].flatMap { id in
            (1...Self.maximumUserAgentLength).contains(id.utf8.count)
                && id.utf8.allSatisfy { (0x21...0x7E).contains($0) } ? id : nil
        }
        software = authenticate.child("user-agent", namespace: NS.sasl2)?.childText("software", namespace: NS.sasl2)
            .map { String($0.unicodeScalars.filter { $0.value >= 0x20 }.prefix(Self.maximumTagLength)) }
        bind = authenticate.child("bind", namespace: NS.bind2)
        resume = authenticate.child("resume", namespace: NS.sm)
        requestedToken = authenticate.child("request-token", namespace: NS.fast)?[attribute: "mechanism"]
            .flatMap(FASTMechanism.init(rawValue:))
        invalidatesToken = ["1", "true"].contains(authenticate.child("fast", namespace: NS.fast)?[attribute: "invalidate"])
    }
}

/// XEP-0388 (SASL2) on the server, with XEP-0386 (Bind 2) and XEP-0198
/// resumption inline: the mechanisms of `ClientSession+SASL` in new
/// wrapping, then, in the one `<success/>`, the bound resource (or the
/// resumed session), what inline features said, and a FAST token; no
/// stream restart. Offered only over TLS, as XEP-0388 §4 requires.
extension ClientSession {
    /// The `<authentication/>` stream feature, with its inline features;
    /// nil on a stream without TLS.
    var sasl2Feature: Element? {
        guard isSecure else { return nil }
        var authentication = Element("authentication", namespace: NS.sasl2)
        for mechanism in offeredMechanisms {
            authentication.append(Element("mechanism", namespace: NS.sasl2, children: [.text(mechanism.rawValue)]))
        }
        var inline = Element("inline", namespace: NS.sasl2)
        let features = server.hooks.bindInlineFeatures.map {
            Node.element(Element("feature", namespace: NS.bind2, attributes: ["var": $0]))
        }
        inline.append(
            Element(
                "bind", namespace: NS.bind2,
                children: [.element(Element("inline", namespace: NS.bind2, children: features))]))
        if server.hooks.bindInlineFeatures.contains(NS.sm) { inline.append(Element("sm", namespace: NS.sm)) }
        if let fast = fastFeature { inline.append(fast) }
        authentication.append(inline)
        return authentication
    }

    /// Handles `<authenticate/>`, `<response/>` and `<abort/>` of XEP-0388.
    /// Anything else during the exchange ends the stream (§3.5).
    func receiveSASL2(_ element: Element) {
        guard isSecure else {
            return fail(StreamError(.policyViolation, text: "SASL2 is offered only over TLS"))
        }
        switch element.name {
        case "authenticate":
            guard case .idle = sasl.step else {
                return saslFailed(.malformedRequest, reason: "<authenticate/> during an exchange")
            }
            sasl.request = SASL2Request(element)
            let payload: [UInt8]?
            do {
                payload = try element.child("initial-response", namespace: NS.sasl2).map { try Self.decode($0) }
            } catch {
                return saslFailed(.incorrectEncoding, reason: "initial response is not base64")
            }
            begin(element[attribute: "mechanism"], payload: payload)
        case "response", "abort":
            guard sasl.request != nil else {
                return fail(StreamError(.unsupportedStanzaType, text: "<\(element.name)/> without <authenticate/>"))
            }
            guard element.name == "response" else { return abortExchange() }
            do {
                continueExchange(with: try Self.decode(element))
            } catch {
                saslFailed(.incorrectEncoding, reason: "response is not base64")
            }
        default:
            fail(StreamError(.unsupportedStanzaType, text: "unexpected <\(element.name)/> in SASL2"))
        }
    }

    /// The base64 data of `<initial-response/>` or `<response/>`, where
    /// XEP-0388 puts no special case for empty data; whitespace, which its
    /// own examples wrap the data in, is skipped.
    private static func decode(_ element: Element) throws -> [UInt8] {
        try Base64.decode(String(element.text.unicodeScalars.filter { !$0.properties.isWhitespace }))
    }

    /// Finishes a successful XEP-0388 exchange: on the storage thread, the
    /// check that the account still has what the login proved and the
    /// FAST token work; then resumption or binding and the `<success/>`,
    /// followed by the new stream features. A login whose password
    /// changed meanwhile ends the stream instead, as binding would.
    ///
    /// The storage job also orders this after the `onAuthenticated` hooks'
    /// loading (one storage thread, jobs in order), so a Bind 2 session
    /// starts with what they load, as one bound the RFC 6120 way would.
    func completeSASL2(_ request: SASL2Request, additionalData: [UInt8]?) {
        withStorage(completion(for: request)) { [self] result in
            switch result {
            case .success(.some(let grant)):
                succeed(request, additionalData: additionalData, token: grant?.element)
            case .success(.none):
                log.notice("the credentials of \(username ?? "") changed during the login")
                fail(StreamError(.notAuthorized, text: "the account's password changed or it was deleted"))
            case .failure(let error):
                log.error("cannot complete the login: \(error)")
                fail(StreamError(.internalServerError, text: "storage error"))
            }
        }
    }

    private func succeed(_ request: SASL2Request, additionalData: [UInt8]?, token: Element?) {
        var success = Element("success", namespace: NS.sasl2)
        if let additionalData {
            success.append(Element("additional-data", namespace: NS.sasl2, children: [.text(Base64.encode(additionalData))]))
        }
        var results: [Element] = []
        if let resume = request.resume {
            switch takeOver(resume) {
            case .resumed(let old, let resumed):
                success.append(authorizationIdentifier(old.jid))
                success.append(resumed)
                if let token { success.append(token) }
                old.send(success)
                old.sendFeatures()
                old.resendUnacknowledged()
                old.server.hooks.sessionResumed(old)
                return old.continueInput()
            case .failed(let failed):
                results.append(failed)
            }
        }
        if let bind = request.bind, let bound = bind2(bind, userAgent: request.userAgent) {
            results.append(bound)
        }
        guard phase != .closed else { return }
        success.append(authorizationIdentifier(jid))
        for result in results { success.append(result) }
        if let token { success.append(token) }
        send(success)
        sendFeatures()
        if phase == .bound { server.hooks.sessionBound(self) }
    }

    /// `<authorization-identifier/>`: the full JID once bound, else the
    /// bare one.
    private func authorizationIdentifier(_ full: JID?) -> Element {
        let identity = full?.description ?? "\(username ?? "")@\(server.domain)"
        return Element("authorization-identifier", namespace: NS.sasl2, children: [.text(identity)])
    }

    /// XEP-0386: binds a resource made of the client's tag and a suffix,
    /// then enables the inline features the request names.
    /// - Returns: `<bound/>` with what those features answered, or nil
    ///   when binding failed (the client then binds the RFC 6120 way, and
    ///   learns why).
    private func bind2(_ request: Element, userAgent: String?) -> Element? {
        let tag = request.childText("tag", namespace: NS.bind2).map { String($0.prefix(SASL2Request.maximumTagLength)) }
            .flatMap { $0.isEmpty ? nil : $0 }
        let suffix = resourceSuffix(tag: tag, userAgent: userAgent)
        var outcome = bindResource(tag.map { "\($0)/\(suffix)" } ?? suffix)
        if case .failure(let error) = outcome, error.condition == .badRequest, phase != .closed {
            outcome = bindResource(suffix)  // a tag that is no valid resource is dropped
        }
        guard case .success = outcome else {
            if case .failure(let error) = outcome { log.notice("Bind 2 failed: \(error.condition.rawValue)") }
            return nil
        }
        var bound = Element("bound", namespace: NS.bind2)
        for child in request.elements where !(child.namespace == NS.bind2 && child.name == "tag") {
            if let answer = server.hooks.enableInline(child, session: self) { bound.append(answer) }
        }
        return bound
    }

    /// The server's part of a Bind 2 resource: derived from the account,
    /// the client's `<user-agent id/>` and tag when it sent an id, so the
    /// same installation gets the same resource and its new session
    /// replaces the old one (XEP-0386 §3.3); random otherwise. The id
    /// itself cannot be read back from it.
    private func resourceSuffix(tag: String?, userAgent: String?) -> String {
        guard let userAgent, let username else { return Hex.encode(Crypto.randomBytes(count: 6)) }
        let label = ["bind2", username, userAgent, tag ?? ""].joined(separator: "\0")
        return Hex.encode(Array(HashFunction.sha256.hmac(key: server.scramSecret, message: Array(label.utf8)).prefix(6)))
    }
}
