import XMPPCore
import XMPPStorage

extension PEP {
    /// XEP-0060 §6.1: subscribes the requester (its bare JID or a bound
    /// resource, the `jid` attribute) to a node whose access model lets
    /// it read; it then gets every notification, whatever its
    /// capabilities, and at once the last item unless the node sends it
    /// never (§6.1.7). A node has at most `pep_max_subscribers`
    /// subscriptions (`policy-violation`), an account at most
    /// `pep_max_subscriptions` to others' nodes (§6.1.3.7).
    func subscribe(_ subscribe: Element, _ request: IQRequest) throws -> IQAnswer {
        let node = try Self.node(of: subscribe)
        let (owner, requester, jid) = try Self.parties(of: subscribe, request)
        // Only resources that exist: an account cannot fill the store with
        // subscriptions of made-up resources.
        guard jid.isBare || request.server.sessions.session(jid) != nil else {
            throw Self.error(.badRequest, "invalid-jid", text: "subscribe your bare JID or a connected resource")
        }
        let subscriber = try Self.subscriber(jid)
        let limits = request.server.config.limits
        let session = request.session
        return .afterStorage({ stores -> (PEPNodeConfiguration, PEPItem?) in
            try stores.inTransaction {
                let configuration = try Self.readableNode(node, of: owner, by: requester, in: stores)
                let subscribers = try stores.pep.subscribers(of: node, owner: owner)
                if !subscribers.contains(subscriber) {
                    guard subscribers.count < limits.pepMaxSubscribers else {
                        throw StanzaError(.policyViolation, text: "a node has at most \(limits.pepMaxSubscribers) subscribers")
                    }
                    let limit = limits.pepMaxSubscriptions
                    let isOwner = subscriber.username == owner
                    guard try isOwner || stores.pep.subscriptionCount(of: subscriber.username) < limit else {
                        throw Self.error(
                            .policyViolation, "too-many-subscriptions", text: "an account has at most \(limit) subscriptions")
                    }
                    _ = try stores.pep.subscribe(subscriber, to: node, of: owner)
                }
                let last = configuration.lastItemDelivery == .never ? nil : try stores.pep.items(of: node, owner: owner, ids: nil, limit: 1).first
                return (configuration, last)
            }
        }) { (configuration, last) in
            let subscription = Element(
                "subscription", namespace: NS.pubsub,
                attributes: ["node": node, "jid": jid.description, "subscription": "subscribed"])
            return .result(Element("pubsub", namespace: NS.pubsub, children: [.element(subscription)])) {
                guard let last, let ownerJID = try? JID(localpart: owner, domainpart: session.server.domain),
                    let message = Self.lastItemMessage(PEPLastItem(node: node, configuration: configuration, item: last), of: ownerJID, log: session.log)
                else { return }
                for handle in Self.sessions(of: jid, server: session.server) {
                    var addressed = message
                    addressed[attribute: "to"] = handle.jid.description
                    handle.deliver(addressed)
                }
            }
        }
    }

    /// XEP-0060 §6.2: ends the requester's subscription; none is
    /// `unexpected-request` + `<not-subscribed/>` (§6.2.3.2).
    func unsubscribe(_ unsubscribe: Element, _ request: IQRequest) throws -> IQAnswer {
        let node = try Self.node(of: unsubscribe)
        let (owner, requester, jid) = try Self.parties(of: unsubscribe, request)
        let subscriber = try Self.subscriber(jid)
        return .afterStorage({ stores in
            guard try stores.reaches(owner, from: requester) else { throw StanzaError(.serviceUnavailable) }
            guard try stores.pep.configuration(of: node, owner: owner) != nil else {
                throw StanzaError(.itemNotFound, text: "no such node")
            }
            guard try stores.pep.unsubscribe(subscriber, from: node, of: owner) else {
                throw Self.error(.unexpectedRequest, "not-subscribed")
            }
        }) { .result() }
    }

    /// The owner's username, the requester, and the JID to (un)subscribe,
    /// whose bare JID must be the requester's (§6.1.3.1: `bad-request` +
    /// `<invalid-jid/>`).
    private static func parties(of operation: Element, _ request: IQRequest) throws(StanzaError) -> (String, JID, JID) {
        guard let owner = request.target.localpart, let requester = request.session.jid else {
            throw StanzaError(.serviceUnavailable)
        }
        guard let text = operation[attribute: "jid"], let jid = try? JID(text), jid.bare == requester.bare else {
            throw error(.badRequest, "invalid-jid", text: "subscribe your own JID")
        }
        return (owner, requester, jid)
    }

    /// The stored form of a subscribing JID of this server.
    private static func subscriber(_ jid: JID) throws(StanzaError) -> PEPSubscriber {
        guard let username = jid.localpart else { throw error(.badRequest, "invalid-jid") }
        return PEPSubscriber(username: username, resource: jid.resourcepart)
    }

    /// The configuration of a node `requester` may read (storage thread).
    ///
    /// - Throws: `service-unavailable` for an unknown account or one that
    ///   blocks the requester, `item-not-found` without the node, and the
    ///   access model's refusal (XEP-0060 §6.1.3, §6.5.9).
    static func readableNode(_ node: String, of owner: String, by requester: JID, in stores: Stores) throws -> PEPNodeConfiguration {
        guard try stores.reaches(owner, from: requester) else { throw StanzaError(.serviceUnavailable) }
        guard let configuration = try stores.pep.configuration(of: node, owner: owner) else {
            throw StanzaError(.itemNotFound, text: "no such node")
        }
        guard try mayRetrieve(requester, from: owner, configuration, in: stores) else {
            throw configuration.accessModel == .whitelist
                ? error(.notAllowed, "closed-node") : error(.notAuthorized, "presence-subscription-required")
        }
        return configuration
    }

    /// The subscribers of a node of `owner` configured so who may read it
    /// now (the access model may have changed since they subscribed).
    static func allowedSubscribers(
        of node: String, owner: String, _ configuration: PEPNodeConfiguration, domain: String, in stores: Stores
    ) throws -> [JID] {
        try stores.pep.subscribers(of: node, owner: owner).compactMap {
            try? JID(localpart: $0.username, domainpart: domain, resourcepart: $0.resource)
        }.filter { subscriber in
            let shares = try configuration.accessModel == .presence && sharesPresence(owner, with: subscriber, in: stores)
            return mayRetrieve(subscriber, from: owner, configuration, sharesPresence: shares)
        }
    }

    /// The available resources a notification to `jid` goes to: that
    /// resource, or for a bare JID those whose priority is not negative.
    static func sessions(of jid: JID, server: ServerContext) -> [SessionHandle] {
        guard jid.isBare else { return server.sessions.session(jid).map { [$0] } ?? [] }
        return server.sessions.availableSessions(of: jid).filter { ($0.presence?.priority ?? -1) >= 0 }
    }
}
