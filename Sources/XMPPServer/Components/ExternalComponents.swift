import XMPPCore

/// XEP-0114: Jabber Component Protocol, the clients' side. Each domain in
/// `components` is a service of this server: a stanza from a user to it,
/// or to any address at it, goes to the connected component as it is
/// (`from` the user's full JID). With the component away, a get/set IQ and
/// a chat or normal message get `service-unavailable` (RFC 6120
/// §8.3.3.19), anything else is dropped. The server's disco#items lists
/// the components connected now (`Disco`).
///
/// Hooked before routing, after XEP-0191 blocking (which runs at
/// priority 0), so that blocking's rules apply first to what a user sends
/// to an address at a component (`ComponentRouting` applies them to what
/// the component sends).
public struct ExternalComponents: ServerFeature {
    private let domains: Set<String>

    /// The feature for the components `config` declares.
    public init(config: ServerConfig) {
        domains = Set(config.componentDomains)
    }

    public func install(_ hooks: Hooks) {
        guard !domains.isEmpty else { return }
        for domain in domains { hooks.addServiceDomain(domain) }
        hooks.onPreRoute(priority: -10) { routed in
            guard let domain = routed.recipient?.domainpart, domains.contains(domain) else { return .passed }
            guard let component = routed.session.server.components.component(domain) else {
                if let stanza = Stanza(routed.element), ComponentRouting.isAnswered(stanza),
                    let reply = stanza.errorReply(StanzaError(.serviceUnavailable, text: "\(domain) is not connected"))
                {
                    routed.session.send(reply)
                }
                return .handled
            }
            component.deliver(routed.element)
            return .handled
        }
    }
}
