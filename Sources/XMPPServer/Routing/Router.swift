import XMPPCore

/// Where each stanza from a bound client goes (RFC 6120 §10, RFC 6121 §8).
///
/// Every stanza first gets `from` = the sender's full JID, whatever the
/// client wrote (XMPPFramework tutorials send bogus ones; Openfire
/// overwrites them silently, so do we). Then:
///
/// | stanza                | `to`                              | goes to                                   |
/// |-----------------------|-----------------------------------|-------------------------------------------|
/// | iq get/set            | none, or the sender's bare JID    | the `.account` handler, else `service-unavailable` |
/// | iq get/set            | the domain                        | the `.host` handler, else `service-unavailable`    |
/// | iq get/set            | another local bare JID            | the `.user` handler, else `service-unavailable`    |
/// | iq                    | a bound full JID                  | that session                              |
/// | iq get/set            | an unbound full JID               | `service-unavailable`                     |
/// | iq result/error       | the domain                        | the feature that sent the request (`onIQResponse`), else dropped |
/// | iq result/error       | not a bound full JID              | dropped (never answer an error)           |
/// | iq get/set            | a local service's domain (`upload.localhost`) | the `.service(domain)` handler, else `service-unavailable` |
/// | iq get/set            | any other JID at a local service  | `service-unavailable`                     |
/// | message (chat, normal)| a local service                   | `service-unavailable`; other messages and presence dropped |
/// | any                   | another domain                    | `remote-server-not-found` (no federation) |
/// | any                   | unparsable                        | `jid-malformed`                           |
/// | iq, message, presence | a user who blocks or is blocked by the sender | per XEP-0191 (`Blocking+Routing.swift`) |
/// | message               | a local address                   | `MessageDelivery` (RFC 6121 §8.5), offline storage |
/// | presence              | none (broadcast) or a local address | `PresenceBroadcast` (RFC 6121 §4), `Subscriptions` (§3) |
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
        stanza.element[attribute: "from"] = sender.description
        Self.stripDelays(claimedBy: domain, from: &stanza.element)
        let recipient: JID?
        do {
            recipient = try stanza.recipient()
        } catch {
            return bounce(stanza, StanzaError(.jidMalformed, text: "bad 'to': \(error)"), to: session)
        }
        if let recipient, recipient.domainpart != domain {
            guard session.server.hooks.isServiceDomain(recipient.domainpart) else {
                return bounce(
                    stanza, StanzaError(.remoteServerNotFound, text: "this server does not federate"), to: session)
            }
            return routeToService(stanza, at: recipient, from: session)
        }
        switch stanza.kind {
        case .iq:
            routeIQ(stanza.element, to: recipient, from: session)
        case .message:
            MessageDelivery.route(stanza.element, to: recipient, from: session)
        case .presence:
            PresenceBroadcast.route(stanza.element, to: recipient, from: session)
        }
    }

    /// Routes an IQ from a client that has not authenticated: only the
    /// `.unauthenticated` handlers (in-band registration) may answer.
    func routeUnauthenticated(_ element: Element, from session: ClientSession) {
        guard let iq = validIQ(element, from: session) else { return }
        guard iq.type == .get || iq.type == .set, let payload = iq.payload else { return }
        guard let handler = session.server.hooks.iqHandler(iq.type!, payload, .unauthenticated) else {
            return bounce(iq, StanzaError(.serviceUnavailable), to: session)
        }
        handler(IQRequest(iq: iq, target: session.server.domainJID, session: session))
    }

    private func routeIQ(_ element: Element, to recipient: JID?, from session: ClientSession) {
        guard let iq = validIQ(element, from: session) else { return }
        let sender = session.jid!
        if let recipient, !recipient.isBare {
            if let target = session.server.sessions.session(recipient) {
                if Blocking.refuses(element, to: recipient, from: session) { return }
                return target.deliver(element)
            }
            return bounce(iq, StanzaError(.serviceUnavailable), to: session)
        }
        if iq.type == .result || iq.type == .error {
            if let recipient, recipient.localpart == nil { session.server.hooks.iqResponse(iq, from: session) }
            return
        }
        guard iq.type == .get || iq.type == .set, let payload = iq.payload else { return }
        let target: IQTarget
        let address: JID
        switch recipient {
        case nil:
            (target, address) = (.account, sender.bare)
        case let recipient? where recipient.localpart == nil:
            (target, address) = (.host, recipient)
        case let recipient? where recipient == sender.bare:
            (target, address) = (.account, recipient)
        case let recipient?:
            if Blocking.refuses(element, to: recipient, from: session) { return }
            (target, address) = (.user, recipient)
        }
        guard let handler = session.server.hooks.iqHandler(iq.type!, payload, target) else {
            return bounce(iq, StanzaError(.serviceUnavailable), to: session)
        }
        handler(IQRequest(iq: iq, target: address, session: session))
    }

    /// Routes a stanza addressed to one of the server's own services
    /// (`Hooks.serviceDomains`): an IQ to the bare domain goes to its
    /// `.service` handler; nothing else there exists.
    private func routeToService(_ stanza: Stanza, at recipient: JID, from session: ClientSession) {
        switch stanza.kind {
        case .iq:
            guard let iq = validIQ(stanza.element, from: session),
                iq.type == .get || iq.type == .set, let payload = iq.payload
            else { return }
            guard recipient.isDomainOnly,
                let handler = session.server.hooks.iqHandler(iq.type!, payload, .service(recipient.domainpart))
            else {
                return bounce(iq, StanzaError(.serviceUnavailable), to: session)
            }
            handler(IQRequest(iq: iq, target: recipient, session: session))
        case .message:
            guard let message = Message(stanza.element) else { return }
            if message.type == .chat || message.type == .normal {
                bounce(message, StanzaError(.serviceUnavailable), to: session)
            }
        case .presence:
            return
        }
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
