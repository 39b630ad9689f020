import XMPPCore
import XMPPStorage

extension PEP {
    /// XEP-0060 §6.5: the items of a node, newest first: all (up to
    /// `max_items`, §6.5.7) or those named by `<item id/>` (§6.5.8), for
    /// the owner and whom the access model lets in.
    func items(_ items: Element, _ request: IQRequest) throws -> IQAnswer {
        let node = try Self.node(of: items)
        guard let owner = request.target.localpart, let requester = request.session.jid else {
            throw StanzaError(.serviceUnavailable)
        }
        let ids = items.elements.filter { $0.name == "item" && $0.namespace == NS.pubsub }.compactMap { $0[attribute: "id"] }
        var limit: Int?
        if let text = items[attribute: "max_items"] {
            guard let value = Int(text), value > 0 else {
                throw StanzaError(.badRequest, text: "max_items must be a positive number")
            }
            limit = value
        }
        return .afterStorage({ [limit] stores in
            // No such account, or it blocks the requester (XEP-0191 §3.3).
            guard try stores.reaches(owner, from: requester) else { throw StanzaError(.serviceUnavailable) }
            guard let configuration = try stores.pep.configuration(of: node, owner: owner) else {
                throw StanzaError(.itemNotFound, text: "no such node")
            }
            // The access model keeps the requester out (XEP-0060 §6.5.9).
            guard try Self.mayRetrieve(requester, from: owner, configuration, in: stores) else {
                throw Self.error(.notAuthorized, "presence-subscription-required")
            }
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

    /// Whether `requester` may retrieve the items of a node of `owner`
    /// configured so (XEP-0060 §4.5): the owner always; with `presence`,
    /// a contact `owner` shares presence with; with `open`, anyone.
    static func mayRetrieve(
        _ requester: JID, from owner: String, _ configuration: PEPNodeConfiguration, in stores: Stores
    ) throws -> Bool {
        guard requester.localpart != owner else { return true }
        switch configuration.accessModel {
        case .open: return true
        case .presence: return try stores.roster.item(requester.bare.description, of: owner)?.state.sharesPresence ?? false
        }
    }
}
