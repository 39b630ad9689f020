import XMPPCore

/// Where each stanza from a bound client goes (RFC 6120 §10, RFC 6121 §8).
/// The router knows no feature: it stamps, resolves, lets the pre-route
/// hooks veto, dispatches to the hooks, and answers what nobody handled.
///
/// 1. `from` becomes the sender's full JID, whatever the client wrote,
///    and `<delay/>`s claiming the server go.
///    COMPAT: XMPPFramework: tutorial code sends bogus `from`s; Openfire
///    overwrites them silently, so do we (no `invalid-from`).
/// 2. `to` is resolved: unparsable is `jid-malformed`; another domain is
///    `remote-server-not-found` (no federation) unless a feature serves it
///    (`Hooks.serviceDomains`: `upload.localhost`).
/// 3. Malformed IQs and presence of unknown type get `bad-request`.
/// 4. The pre-route hooks may take it (XEP-0191 blocking; XEP-0114
///    external components take what is addressed to their domains,
///    `ExternalComponents`, and `ComponentRouting` routes what they send).
/// 5. It goes to its event:
///
/// | stanza                | `to`                              | goes to                                   |
/// |-----------------------|-----------------------------------|-------------------------------------------|
/// | iq get/set            | none, or the sender's bare JID    | the `.account` handler                    |
/// | iq get/set            | the domain                        | the `.host` handler                       |
/// | iq get/set            | another local bare JID            | the `.user` handler                       |
/// | iq get/set            | a service's domain                | the `.service(domain)` handler, else its `onAnyIQ` handler |
/// | iq get/set            | an address at a service           | the service's `onAnyIQ` handler           |
/// | iq                    | a bound full JID                  | that session                              |
/// | iq                    | an unbound full JID               | `service-unavailable`                     |
/// | iq result/error       | the domain                        | the feature that sent the request (`onIQResponse`), else dropped |
/// | iq result/error       | anything else                     | dropped (never answer an answer)          |
/// | message               | none, or a local bare JID         | `onMessage(to: .bare)` (`MessageDelivery`, RFC 6121 §8.5) |
/// | message               | a local full JID                  | `onMessage(to: .full)`                    |
/// | message               | the domain                        | `onMessage(to: .host)`                    |
/// | message               | a service, or a JID at it         | `onMessage(to: .service(domain))`         |
/// | presence, no `to`     | —                                 | `onPresence(.broadcast)` (`PresenceBroadcast`, §4) |
/// | presence, available, unavailable, error | a local address | `onPresence(.directed)` (§4.6)          |
/// | presence subscribe, subscribed, unsubscribe, unsubscribed | a local address | `onPresence(.subscription)` (`Subscriptions`, §3) |
/// | presence              | a service, or a JID at it         | `onPresence(.service(domain))`            |
/// | presence probe        | any                               | dropped (§4.3: probes are the server's)   |
///
/// 6. Nothing handled it: a get/set IQ or a chat or normal message gets
///    `service-unavailable` (`unhandled`); anything else is dropped.
public final class Router: Sendable {
    private let domain: String

    /// Creates the router for `domain`.
    public init(domain: String) {
        self.domain = domain
    }

    /// Removes `<delay/>` stamps (XEP-0203) in the server's name from a
    /// client's stanza: only the server stamps a delay as itself (offline
    /// storage), and clients trust such a stamp for when a message was
    /// sent, so a contact must not be able to backdate one that way.
    static func stripDelays(claimedBy domain: String, from element: inout Element) {
        element.removeChildren(named: "delay", namespace: NS.delay) { delay in
            guard let from = delay[attribute: "from"] else { return false }
            guard let jid = try? JID(from) else { return true }
            return jid.domainpart == domain && jid.localpart == nil
        }
    }

    /// Routes a stanza from a bound session.
    func route(_ element: Element, from session: ClientSession) {
        guard var stanza = Stanza(element), let sender = session.jid else { return }
        let arrival = session.server.metrics.received(stanza.kind, on: session.server.loop)
        defer { session.server.metrics.routed(since: arrival, on: session.server.loop) }
        stanza.element[attribute: "from"] = sender.description
        if let language = session.streamLanguage, stanza.element[attribute: "lang", namespace: NS.xml] == nil {
            stanza.element[attribute: "lang", namespace: NS.xml] = language
        }
        Self.stripDelays(claimedBy: domain, from: &stanza.element)
        let recipient: JID?
        do {
            recipient = try stanza.recipient()
        } catch {
            return bounce(stanza, StanzaError(.jidMalformed, text: "bad 'to': \(error)"), to: session)
        }
        var service: String?
        if let recipient, recipient.domainpart != domain {
            guard session.server.hooks.isServiceDomain(recipient.domainpart) else {
                return bounce(
                    stanza, StanzaError(.remoteServerNotFound, text: "this server does not federate"), to: session)
            }
            service = recipient.domainpart
        }
        switch stanza.kind {
        case .iq:
            guard let iq = validIQ(stanza.element, from: session), !vetoed(iq.element, to: recipient, from: session)
            else { return }
            if let service { return routeIQ(iq, toService: service, at: recipient!, from: session) }
            routeIQ(iq, to: recipient, from: session)
        case .message:
            guard !vetoed(stanza.element, to: recipient, from: session) else { return }
            routeMessage(stanza.element, to: recipient, service: service, from: session)
        case .presence:
            routePresence(stanza.element, to: recipient, service: service, from: session)
        }
    }

    /// Whether a pre-route hook (XEP-0191 blocking) took the stanza.
    private func vetoed(_ element: Element, to recipient: JID?, from session: ClientSession) -> Bool {
        let hooks = session.server.hooks
        return hooks.preRoute(RoutedStanza(element: element, sender: session.jid!, recipient: recipient, session: session))
    }

    /// Routes an IQ from a client that has not authenticated: only the
    /// `.unauthenticated` handlers (in-band registration) may answer.
    func routeUnauthenticated(_ element: Element, from session: ClientSession) {
        guard let iq = validIQ(element, from: session) else { return }
        dispatch(iq, to: .unauthenticated, at: session.server.domainJID, from: session)
    }

    private func routeIQ(_ iq: IQ, to recipient: JID?, from session: ClientSession) {
        let sender = session.jid!
        if let recipient, !recipient.isBare {
            // RFC 6120 §8.5.3.2.1: to a resource that is not there.
            guard let target = session.server.sessions.session(recipient) else {
                return bounce(iq, StanzaError(.serviceUnavailable), to: session)
            }
            return target.deliver(iq.element)
        }
        if iq.type == .result || iq.type == .error {
            // Answers to the server's requests, which come from the domain
            // or from an account's bare JID (PEP's capabilities queries).
            if recipient?.isBare ?? true { session.server.hooks.iqResponse(iq, from: session) }
            return
        }
        let (target, address): (IQTarget, JID) =
            switch recipient {
            case nil: (.account, sender.bare)
            case let recipient? where recipient.localpart == nil: (.host, recipient)
            case let recipient? where recipient == sender.bare: (.account, recipient)
            case let recipient?: (.user, recipient)
            }
        dispatch(iq, to: target, at: address, from: session)
    }

    /// An IQ to one of the server's own services (`Hooks.serviceDomains`):
    /// a request to the bare domain goes to its `.service` handler, and
    /// what none takes, or a request to an address at the domain, to the
    /// service's `onAnyIQ` handler.
    private func routeIQ(_ iq: IQ, toService service: String, at recipient: JID, from session: ClientSession) {
        let fallback = session.server.hooks.serviceIQHandler(service)
        guard recipient.isDomainOnly || fallback != nil else { return unhandled(iq.element, session) }
        let target: IQTarget? = recipient.isDomainOnly ? .service(service) : nil
        dispatch(iq, to: target, at: recipient, from: session, fallback: fallback)
    }

    /// Hands a request to its handler; answers (only) a request nobody handles.
    private func dispatch(
        _ iq: IQ, to target: IQTarget?, at address: JID, from session: ClientSession, fallback: IQHandler? = nil
    ) {
        guard iq.type == .get || iq.type == .set, let payload = iq.payload else { return }
        let request = IQRequest(iq: iq, target: address, session: session)
        guard let handler = target.flatMap({ session.server.hooks.iqHandler(iq.type!, payload, $0) }) ?? fallback
        else {
            return request.fail(StanzaError(.serviceUnavailable))
        }
        request.answer { try handler(request) }
    }

    /// A message goes down the `onMessage` chain of its target.
    private func routeMessage(_ element: Element, to recipient: JID?, service: String?, from session: ClientSession) {
        let sender = session.jid!
        let address = recipient ?? sender.bare
        let target: MessageTarget =
            if let service { .service(service) }
            else if address.localpart == nil { .host }
            else if address.isBare { .bare }
            else { .full }
        var message = RoutedMessage(element: element, sender: sender, recipient: address, session: session)
        if !session.server.hooks.message(&message, to: target) { unhandled(message.element, session) }
    }

    /// A presence goes down the `onPresence` chain of its kind (RFC 6121
    /// §3, §4); a probe from a client is dropped (§4.3: probes are the
    /// server's business).
    private func routePresence(_ element: Element, to recipient: JID?, service: String?, from session: ClientSession) {
        guard let presence = Presence(element) else { return }
        let target: PresenceTarget
        if let service {
            target = .service(service)
        } else {
            guard let type = presence.type else {
                return bounce(presence, StanzaError(.badRequest, text: "unknown presence type"), to: session)
            }
            switch type {
            case .subscribe, .subscribed, .unsubscribe, .unsubscribed:
                guard recipient != nil else {
                    return bounce(presence, StanzaError(.badRequest, text: "a subscription needs a 'to'"), to: session)
                }
                target = .subscription
            case .probe:
                return
            case .error:
                guard recipient != nil else { return }
                target = .directed
            case .available, .unavailable:
                target = recipient == nil ? .broadcast : .directed
            }
        }
        guard !vetoed(element, to: recipient, from: session) else { return }
        let routed = RoutedPresence(presence: presence, sender: session.jid!, recipient: recipient, session: session)
        _ = session.server.hooks.presence(routed, to: target)
    }

    /// What becomes of a stanza no handler took (RFC 6120 §8.3.3.19,
    /// RFC 6121 §8.5): a request or a chat or normal message gets
    /// `service-unavailable`; anything else is dropped.
    private func unhandled(_ element: Element, _ session: ClientSession) {
        guard let stanza = Stanza(element) else { return }
        let answered: Bool =
            switch stanza.kind {
            case .iq: IQ(element).map { $0.type == .get || $0.type == .set } ?? false
            case .message: Message(element).map { $0.type == .chat || $0.type == .normal } ?? false
            case .presence: false
            }
        if answered { bounce(stanza, StanzaError(.serviceUnavailable), to: session) }
    }

    /// The IQ in `element`, or nil after answering a malformed one with
    /// its error (RFC 6120 §8.2.3).
    private func validIQ(_ element: Element, from session: ClientSession) -> IQ? {
        guard let iq = IQ(element) else { return nil }
        do {
            try iq.validate()
        } catch {
            bounce(iq, error, to: session)
            return nil
        }
        return iq
    }

    /// Answers `stanza` with `error`, unless it is an error itself.
    private func bounce(_ stanza: some StanzaView, _ error: StanzaError, to session: ClientSession) {
        if let reply = stanza.errorReply(error) { session.send(reply) }
    }
}
