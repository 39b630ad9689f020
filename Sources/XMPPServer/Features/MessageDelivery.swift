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
///
/// First, XEP-0191 blocking may refuse it (`Blocking+Routing.swift`);
/// XEP-0280 carbons copy what is sent and what is delivered (`Carbons`).
enum MessageDelivery {
    /// Routes a message from a bound session; `from` is stamped.
    static func route(_ original: Element, to recipient: JID?, from session: ClientSession) {
        guard let sender = session.jid else { return }
        let target = recipient ?? sender.bare
        // Blocking first: a refused message is neither archived nor copied.
        if target.localpart != nil, Blocking.refuses(original, to: target, from: session) { return }
        let element = session.server.hooks.messageRouting(original, to: recipient, from: session)
        guard let message = Message(element) else { return }
        guard target.localpart != nil else {
            if message.type == .chat || message.type == .normal { bounce(message, .serviceUnavailable, session) }
            return
        }
        let copying = Carbons.Copying(message)
        Carbons.copySent(copying, to: target, from: session)
        if !target.isBare {
            if let handle = session.server.sessions.session(target) {
                handle.deliver(copying.delivered.element)
                return Carbons.copyReceived(copying, by: target.bare, on: [target], server: session.server)
            }
            switch message.type {
            case .chat, .normal: break
            case .groupchat: return bounce(message, .serviceUnavailable, session)
            case .headline, .error: return
            }
        }
        deliver(copying, to: target.bare, from: session)
    }

    private static func deliver(_ copying: Carbons.Copying, to user: JID, from session: ClientSession) {
        let message = copying.delivered
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
            let recipients = candidates.filter { $0.1 == top }.map(\.0)
            for handle in recipients { handle.deliver(message.element) }
            Carbons.copyReceived(copying, by: user, on: recipients.map(\.jid), server: session.server)
        }
    }

    static func bounce(_ message: Message, _ condition: StanzaError.Condition, _ session: ClientSession) {
        if let reply = message.errorReply(StanzaError(condition)) { session.send(reply) }
    }
}
