import XMPPCore

/// RFC 6121 §8.5 and RFC 6120 §10: where a message to a local address goes.
///
/// | `to`                 | type          | goes to                                                     |
/// |----------------------|---------------|-------------------------------------------------------------|
/// | none                 | any           | as if to the sender's own bare JID (RFC 6120 §10.3.1)       |
/// | the domain           | chat, normal  | `service-unavailable`; others dropped                       |
/// | connected full JID   | any           | that resource                                               |
/// | other full JID       | chat, normal  | as if to the bare JID (§8.5.3.2.1)                          |
/// | other full JID       | groupchat     | `service-unavailable`; headline, error dropped              |
/// | bare JID             | chat, normal  | the available resources of highest non-negative priority; none: offline storage (with a body), or `service-unavailable` when the account does not exist |
/// | bare JID             | headline      | every available resource of non-negative priority, else dropped |
/// | bare JID             | groupchat     | `service-unavailable`                                       |
/// | bare JID             | error         | dropped                                                     |
enum MessageDelivery {
    /// Routes a message from a bound session; `from` is stamped.
    static func route(_ element: Element, to recipient: JID?, from session: ClientSession) {
        let element = session.server.hooks.messageRouting(element, to: recipient, from: session)
        guard let message = Message(element), let sender = session.jid else { return }
        let target = recipient ?? sender.bare
        guard target.localpart != nil else {
            if message.type == .chat || message.type == .normal { bounce(message, .serviceUnavailable, session) }
            return
        }
        if !target.isBare {
            if let handle = session.server.sessions.session(target) { return handle.deliver(element) }
            switch message.type {
            case .chat, .normal: break
            case .groupchat: return bounce(message, .serviceUnavailable, session)
            case .headline, .error: return
            }
        }
        deliver(message, to: target.bare, from: session)
    }

    private static func deliver(_ message: Message, to user: JID, from session: ClientSession) {
        let candidates = session.server.sessions.availableSessions(of: user).compactMap { handle in
            handle.presence.flatMap { $0.priority >= 0 ? (handle, $0.priority) : nil }
        }
        switch message.type {
        case .error:
            return
        case .groupchat:
            bounce(message, .serviceUnavailable, session)
        case .headline:
            for (handle, _) in candidates { handle.deliver(message.element) }
        case .chat, .normal:
            guard let top = candidates.map(\.1).max() else {
                return OfflineMessages.store(message, for: user, from: session)
            }
            for (handle, priority) in candidates where priority == top { handle.deliver(message.element) }
        }
    }

    static func bounce(_ message: Message, _ condition: StanzaError.Condition, _ session: ClientSession) {
        if let reply = message.errorReply(StanzaError(condition)) { session.send(reply) }
    }
}
