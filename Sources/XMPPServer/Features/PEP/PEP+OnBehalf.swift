import XMPPCore
import XMPPStorage

extension PEP {
    /// Publishes for a `PEPPublishRequest`: as the owner's own publish,
    /// without preconditions, creating the node with the request's
    /// configuration, or giving it to the node that exists when the
    /// request enforces it; then `PEPItemPublished` with `onBehalf`.
    /// Failures (an item too big, no room for a node, the quota) are logged.
    func publish(_ request: PEPPublishRequest) {
        let session = request.session
        let server = session.server
        let (owner, node) = (request.owner, request.node)
        guard let username = owner.localpart, let payload = request.item.elements.first else {
            return server.log.error("a PEP publish request for \(owner) in \(node) has no payload")
        }
        let id = request.item[attribute: "id"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.newItemID()
        let limits = server.config.limits
        let stored: PEPItem
        do {
            stored = try Self.storable(id: id, payload, limits: limits)
        } catch {
            return server.log.error("PEP publish for \(owner) in \(node) refused: \(error)")
        }
        let (configuration, enforcing) = (request.configuration, request.enforcesConfiguration)
        let domain = server.domain
        server.storage.run(on: server.loop, { stores in
            try Self.store(
                stored, in: node, of: username, creating: configuration, enforcing: enforcing,
                preconditions: ConfigurationFields(), limits: limits, domain: domain, stores: stores)
        }) { result in
            switch result {
            case .success(let audience):
                let item = Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(payload)])
                notifyPublished(item, node: node, of: owner, audience, server: server)
                server.hooks.fire(PEPItemPublished(owner: owner, node: node, item: item, onBehalf: true, session: session))
            case .failure(let error):
                server.log.error("PEP publish for \(owner) in \(node) failed: \(error)")
            }
        }
    }

    /// Retracts for a `PEPRetractRequest`, notifying as the node's
    /// `notify_retract` says; then `PEPItemRetracted` with `onBehalf`.
    /// Nothing happens when there is no such item.
    func retract(_ request: PEPRetractRequest) {
        let session = request.session
        let server = session.server
        let (owner, node, id) = (request.owner, request.node, request.itemID)
        guard let username = owner.localpart else { return }
        let domain = server.domain
        server.storage.run(on: server.loop, { stores in
            try Self.remove(id, from: node, of: username, domain: domain, stores: stores)
        }) { result in
            switch result {
            case .success(let audience?):
                if audience.configuration.notifyRetract {
                    notifyRetracted(id, node: node, of: owner, audience, server: server)
                }
                server.hooks.fire(PEPItemRetracted(owner: owner, node: node, itemID: id, onBehalf: true, session: session))
            case .success(nil):
                return
            case .failure(let error):
                server.log.error("PEP retract for \(owner) in \(node) failed: \(error)")
            }
        }
    }
}
