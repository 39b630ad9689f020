import XMPPCore
import XMPPStorage

extension PEP {
    /// XEP-0060 §6.5: the items of a node, newest first: all (up to
    /// `max_items`, §6.5.7) or those named by `<item id/>` (§6.5.8), for
    /// the owner and whom the access model lets in; never more than
    /// `pep_max_items`, the newest (§6.5.4 lets a service return some).
    func items(_ items: Element, _ request: IQRequest) throws -> IQAnswer {
        let node = try Self.node(of: items)
        guard let owner = request.target.localpart, let requester = request.session.jid else {
            throw StanzaError(.serviceUnavailable)
        }
        let ids = items.elements.filter { $0.name == "item" && $0.namespace == NS.pubsub }.compactMap { $0[attribute: "id"] }
        var limit = request.server.config.limits.pepMaxItems
        if let text = items[attribute: "max_items"] {
            guard let value = Int(text), value > 0 else {
                throw StanzaError(.badRequest, text: "max_items must be a positive number")
            }
            limit = min(value, limit)
        }
        return .afterStorage({ [limit] stores in
            _ = try Self.readableNode(node, of: owner, by: requester, in: stores)
            return try stores.pep.items(of: node, owner: owner, ids: ids.isEmpty ? nil : ids, limit: limit)
        }) { found in
            var list = Element("items", namespace: NS.pubsub, attributes: ["node": node])
            for item in found {
                guard let payload = StoredStanza.parse(item.payload) else {
                    request.session.log.error("a stored PEP item of \(owner) in \(node) does not parse")
                    continue
                }
                list.append(Element("item", namespace: NS.pubsub, attributes: ["id": item.id], children: [.element(payload)]))
            }
            return .result(Element("pubsub", namespace: NS.pubsub, children: [.element(list)]))
        }
    }

    /// XEP-0030 disco#items of an account (XEP-0060 §5.2): its nodes,
    /// those the requester may retrieve; a node's title is its name. To
    /// whom neither owns the account nor has a presence subscription to
    /// it, `service-unavailable`, as for an account that does not exist
    /// (RFC 6121 §8.5.1).
    func nodes(_ request: IQRequest) throws -> IQAnswer {
        guard let owner = request.target.localpart, let requester = request.session.jid else {
            throw StanzaError(.serviceUnavailable)
        }
        var query = try DiscoAnswer.query(request)
        let account = request.target.bare.description
        return .afterStorage({ stores in
            guard try stores.reaches(owner, from: requester) else { throw StanzaError(.serviceUnavailable) }
            let sharesPresence = try Self.sharesPresence(owner, with: requester, in: stores)
            guard sharesPresence || requester.localpart == owner else { throw StanzaError(.serviceUnavailable) }
            return try stores.pep.nodes(of: owner).filter {
                Self.mayRetrieve(requester, from: owner, $0.configuration, sharesPresence: sharesPresence)
            }
        }) { nodes in
            for node in nodes {
                var item = Element("item", namespace: NS.discoItems, attributes: ["jid": account, "node": node.name])
                if !node.configuration.title.isEmpty { item[attribute: "name"] = node.configuration.title }
                query.append(item)
            }
            return .result(query)
        }
    }

    /// Whether `requester` may retrieve the items of a node of `owner`
    /// configured so (XEP-0060 §4.5): the owner always; with `presence`,
    /// a contact `owner` shares presence with; with `open`, anyone; with
    /// `whitelist`, the owner only.
    static func mayRetrieve(
        _ requester: JID, from owner: String, _ configuration: PEPNodeConfiguration, in stores: Stores
    ) throws -> Bool {
        let sharesPresence = try configuration.accessModel == .presence && sharesPresence(owner, with: requester, in: stores)
        return mayRetrieve(requester, from: owner, configuration, sharesPresence: sharesPresence)
    }

    /// `mayRetrieve(_:from:_:in:)` once it is known whether `owner` shares
    /// presence with `requester`.
    static func mayRetrieve(
        _ requester: JID, from owner: String, _ configuration: PEPNodeConfiguration, sharesPresence: Bool
    ) -> Bool {
        guard requester.localpart != owner else { return true }
        switch configuration.accessModel {
        case .open: return true
        case .presence: return sharesPresence
        case .whitelist: return false
        }
    }

    /// Whether `owner` shares presence with `requester` (`from` or `both`).
    static func sharesPresence(_ owner: String, with requester: JID, in stores: Stores) throws -> Bool {
        try stores.roster.item(requester.bare.description, of: owner)?.state.sharesPresence ?? false
    }
}
