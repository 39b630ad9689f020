import XMPPCore

/// XEP-0280: Message Carbons (`urn:xmpp:carbons:2`). A resource enables
/// carbons for its session (XMPPFramework does so right after login,
/// without disco); from then on it gets a copy of every eligible message
/// its user sends from another resource (`<sent/>`) or receives on
/// another resource (`<received/>`), wrapped in an XEP-0297
/// `<forwarded/>`, from the user's bare JID and to its own full JID (§7,
/// §8). The flag lives on the session's registry handle, so it goes with
/// the session.
///
/// Choices where the XEP leaves room:
/// - Eligible (§6): type `chat`, and type `normal` with a `<body/>`, as
///   Prosody does; never `error`, `groupchat` or `headline`, and never a
///   message with `<private xmlns='urn:xmpp:carbons:2'/>`, XEP-0334
///   `<no-copy/>`, or a carbon inside (a client forwarding one).
/// - `<private/>` is removed before delivery to the recipient (§9).
/// - A received message goes to storage, not to carbons, when the user
///   has no resource to take it (XEP-0160): the resources that have
///   carbons on get it once, at their next initial presence, not twice.
public struct Carbons: ServerFeature {
    public init() {}

    public func install(_ hooks: inout Hooks) {
        hooks.advertise(NS.carbons)
        // §5, §10.1: enabling or disabling again is no error.
        hooks.onIQ(.set, NS.carbons, "enable", to: [.account]) { request in
            request.session.handle?.carbonsEnabled = true
            request.reply()
        }
        hooks.onIQ(.set, NS.carbons, "disable", to: [.account]) { request in
            request.session.handle?.carbonsEnabled = false
            request.reply()
        }
    }

    /// A message on its way to a local user, checked once for carbons.
    struct Copying {
        /// The message as delivered: without `<private/>`.
        var delivered: Message
        /// Whether it gets carbons (§6).
        var isEligible: Bool

        init(_ message: Message) {
            delivered = message
            isEligible = false
            var isPrivate = false
            var excluded = false
            for child in message.element.elements {
                switch (child.namespace, child.name) {
                case (NS.carbons, "private"): isPrivate = true
                case (NS.carbons, "sent"), (NS.carbons, "received"), (NS.hints, "no-copy"): excluded = true
                default: break
                }
            }
            if isPrivate { delivered.element.removeChildren("private", namespace: NS.carbons) }
            guard !isPrivate, !excluded else { return }
            switch message.type {
            case .chat: isEligible = true
            case .normal: isEligible = message.body != nil
            case .error, .groupchat, .headline: isEligible = false
            }
        }
    }

    /// §8: a `<sent/>` copy of what `session` sent to `recipient`, for
    /// each of the user's other resources with carbons on.
    static func copySent(_ copying: Copying, to recipient: JID, from session: ClientSession) {
        guard copying.isEligible, let sender = session.jid else { return }
        var original = copying.delivered.element
        if original[attribute: "to"] == nil { original[attribute: "to"] = recipient.description }
        send("sent", original, of: sender.bare, skipping: [sender], server: session.server)
    }

    /// §7: a `<received/>` copy of a message `user` got on `recipients`,
    /// for each of the user's other resources with carbons on.
    static func copyReceived(_ copying: Copying, by user: JID, on recipients: [JID], server: ServerContext) {
        guard copying.isEligible, !recipients.isEmpty else { return }
        send("received", copying.delivered.element, of: user, skipping: recipients, server: server)
    }

    private static func send(_ kind: String, _ message: Element, of user: JID, skipping: [JID], server: ServerContext) {
        let targets = server.sessions.sessions(of: user) { $0.carbonsEnabled && !skipping.contains($0.jid) }
        guard !targets.isEmpty else { return }
        let forwarded = Element("forwarded", namespace: NS.forward, children: [.element(message)])
        var carbon = Element("message", namespace: NS.client, attributes: ["from": user.description])
        carbon[attribute: "type"] = message[attribute: "type"]
        carbon.append(Element(kind, namespace: NS.carbons, children: [.element(forwarded)]))
        for handle in targets {
            carbon[attribute: "to"] = handle.jid.description
            handle.deliver(carbon)
        }
    }
}
