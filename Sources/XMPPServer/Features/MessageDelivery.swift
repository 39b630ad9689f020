import XMPPCore

/// RFC 6121 §8.5 and RFC 6120 §10: where a message to a local user goes;
/// the `onMessage` handler for bare and full JIDs, at priority 0 (the
/// archive and carbons look at the message before it).
///
/// | `to`                 | type          | goes to                                                     |
/// |----------------------|---------------|-------------------------------------------------------------|
/// | none                 | any           | as if to the sender's own bare JID (RFC 6120 §10.3.1)       |
/// | connected full JID   | any           | that resource                                               |
/// | other full JID       | chat, normal  | as if to the bare JID (§8.5.3.2.1)                          |
/// | other full JID       | groupchat     | `service-unavailable`; headline, error dropped              |
/// | bare JID             | chat, normal  | the available resources of highest non-negative priority; none: the `onMessageOffline` fallback (storage, or `service-unavailable`) |
/// | bare JID             | headline      | every available resource of non-negative priority, else dropped |
/// | bare JID             | groupchat     | `service-unavailable`                                       |
/// | bare JID             | error         | dropped                                                     |
///
/// A message delivered to resources fires `MessageDelivered` (carbons'
/// received copies).
public struct MessageDelivery: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.onMessage(to: [.bare, .full]) { message in
            Self.deliver(message)
            return .handled
        }
    }

    private static func deliver(_ routed: RoutedMessage) {
        guard let message = Message(routed.element) else { return }
        let server = routed.server
        let target = routed.recipient
        if !target.isBare {
            if let handle = server.sessions.session(target) {
                handle.deliver(routed.element)
                return server.hooks.fire(MessageDelivered(message: routed, user: target.bare, resources: [target]))
            }
            switch message.type {
            case .chat, .normal: break
            case .groupchat: return routed.bounce(StanzaError(.serviceUnavailable))
            case .headline, .error: return
            }
        }
        let user = target.bare
        switch message.type {
        case .error:
            return
        case .groupchat:
            routed.bounce(StanzaError(.serviceUnavailable))
        case .headline:
            for handle in server.sessions.availableSessions(of: user) where (handle.presence?.priority ?? -1) >= 0 {
                handle.deliver(message.element)
            }
        case .chat, .normal:
            let recipients = server.sessions.topPriorityResources(of: user)
            guard !recipients.isEmpty else {
                let undelivered = UndeliveredMessage(
                    message: message, original: routed.original, user: user, waitingSender: routed.session, server: server)
                return server.hooks.messageOffline(undelivered)
            }
            for handle in recipients { handle.deliver(message.element) }
            server.hooks.fire(MessageDelivered(message: routed, user: user, resources: recipients.map(\.jid)))
        }
    }
}
