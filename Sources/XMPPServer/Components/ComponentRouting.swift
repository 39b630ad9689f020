import XMPPCore

/// Where a stanza from a connected component goes (XEP-0114 §3.3). The
/// component speaks for every address at its domain, so `from` must be
/// one of them (else `invalid-from`, and the stream ends); a missing
/// `from` means the component's domain itself (as Prosody reads it).
///
/// | `to`                          | stanza                 | goes to                                                  |
/// |-------------------------------|------------------------|----------------------------------------------------------|
/// | none                          | any but error/result   | `bad-request` (a component must address its stanzas)     |
/// | unparsable                    | any but error/result   | `jid-malformed`                                          |
/// | a user who blocks the sender  | any                    | as nothing took it (XEP-0191 §3.3)                       |
/// | a bound full JID              | any                    | that session                                             |
/// | another full JID              | chat or normal message | as if to the bare JID (RFC 6121 §8.5.3.2.1)              |
/// | a local bare JID              | chat or normal message | the available resources of highest non-negative priority; none: offline storage |
/// | a local bare JID              | headline message       | every available resource of non-negative priority        |
/// | a local bare JID              | presence               | every available resource (subscriptions are not handled) |
/// | the domain                    | ping (XEP-0199)        | an empty result                                          |
/// | the domain                    | result or error IQ     | the feature whose request it answers (`onComponentIQResponse`), else dropped |
/// | any other local address       | any                    | as nothing took it (below)                               |
/// | a connected component         | any                    | that component                                           |
/// | a disconnected or local service | any                  | as nothing took it (below)                               |
/// | another domain                | any but error/result   | `remote-server-not-found` (no federation)                |
///
/// Nothing took it: a get/set IQ and a chat or normal message get
/// `service-unavailable` (RFC 6120 §8.3.3.19); anything else is dropped.
enum ComponentRouting {
    /// Routes `element`, a stanza in `jabber:client`, from `session`.
    static func route(_ element: Element, from session: ComponentSession) {
        guard let domain = session.domain else { return }
        var element = element
        if let from = element[attribute: "from"] {
            guard let sender = try? JID(from), sender.domainpart == domain else {
                return session.fail(StreamError(.invalidFrom, text: "'\(from)' is not an address at \(domain)"))
            }
            element[attribute: "from"] = sender.description
        } else {
            element[attribute: "from"] = domain
        }
        guard let stanza = Stanza(element) else { return }
        guard let to = element[attribute: "to"] else {
            return bounce(stanza, StanzaError(.badRequest, text: "a component's stanza needs a 'to'"), to: session)
        }
        guard let recipient = try? JID(to) else {
            return bounce(stanza, StanzaError(.jidMalformed, text: "bad 'to': \(to)"), to: session)
        }
        let server = session.server
        if recipient.domainpart == server.domain { return routeLocally(stanza, to: recipient, from: session) }
        if let component = server.components.component(recipient.domainpart) { return component.deliver(element) }
        if server.hooks.isServiceDomain(recipient.domainpart) { return unhandled(stanza, session) }
        bounce(stanza, StanzaError(.remoteServerNotFound, text: "this server does not federate"), to: session)
    }

    /// To the server, or to a user at it.
    private static func routeLocally(_ stanza: Stanza, to recipient: JID, from session: ComponentSession) {
        let server = session.server
        if recipient.localpart == nil {
            if let iq = IQ(stanza.element), iq.type == .get, iq.payload?.namespace == NS.ping {
                return session.deliver(iq.result())
            }
            if let iq = IQ(stanza.element), iq.type == .result || iq.type == .error, recipient.isBare {
                return server.hooks.componentIQResponse(iq, server: server)
            }
            return unhandled(stanza, session)
        }
        // XEP-0191 §3.3: a user who blocks the sender hears nothing of it.
        if let sender = try? JID(stanza.element[attribute: "from"] ?? ""),
            server.blocklists.verdict(from: sender, to: recipient) == .recipientBlocksSender
        {
            return unhandled(stanza, session)
        }
        if !recipient.isBare, let handle = server.sessions.session(recipient) {
            return handle.deliver(stanza.element)
        }
        let user = recipient.bare
        switch stanza.kind {
        case .iq:
            unhandled(stanza, session)
        case .presence:
            guard recipient.isBare, Presence(stanza.element)?.type != .probe else { return }
            for handle in server.sessions.availableSessions(of: user) { handle.deliver(stanza.element) }
        case .message:
            guard let message = Message(stanza.element) else { return }
            switch message.type {
            case .chat, .normal:
                let recipients = server.sessions.topPriorityResources(of: user)
                for handle in recipients { handle.deliver(stanza.element) }
                if recipients.isEmpty {
                    server.hooks.messageOffline(
                        UndeliveredMessage(
                            message: message, original: stanza.element, user: user, waitingSender: nil, server: server))
                }
            case .headline where recipient.isBare:
                for handle in server.sessions.availableSessions(of: user) where (handle.presence?.priority ?? -1) >= 0 {
                    handle.deliver(stanza.element)
                }
            case .groupchat:
                bounce(stanza, StanzaError(.serviceUnavailable), to: session)
            case .headline, .error:
                break
            }
        }
    }

    /// What becomes of a stanza nothing took: a request or a chat or
    /// normal message gets `service-unavailable`; anything else is dropped.
    static func unhandled(_ stanza: Stanza, _ session: ComponentSession) {
        if isAnswered(stanza) { bounce(stanza, StanzaError(.serviceUnavailable), to: session) }
    }

    /// Whether nothing taking `stanza` deserves an error (RFC 6120
    /// §8.3.3.19, RFC 6121 §8.5): a get/set IQ, a chat or normal message.
    static func isAnswered(_ stanza: Stanza) -> Bool {
        switch stanza.kind {
        case .iq: IQ(stanza.element).map { $0.type == .get || $0.type == .set } ?? false
        case .message: Message(stanza.element).map { $0.type == .chat || $0.type == .normal } ?? false
        case .presence: false
        }
    }

    /// Answers `stanza` with `error`, unless it is an error or an IQ result.
    private static func bounce(_ stanza: Stanza, _ error: StanzaError, to session: ComponentSession) {
        guard IQ(stanza.element)?.type != .result, let reply = stanza.errorReply(error) else { return }
        session.deliver(reply)
    }
}
