import Foundation
import XMPPCore
import XMPPStorage

extension PEP {
    /// What a change to a node needs for its notifications: the node's
    /// configuration, the owner's contacts who may hear of it, and the
    /// subscribers who still may.
    struct Audience: Sendable {
        var configuration: PEPNodeConfiguration
        var contacts: [String]
        var subscribers: [JID] = []
    }

    /// XEP-0060 §7.1: publishes one item, creating the node with the
    /// defaults and the publish-options, or checking them against its
    /// configuration (§7.1.5). The interested hear of it before the
    /// publisher's result, as from Prosody.
    func publish(_ publish: Element, options: Element?, _ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let node = try Self.node(of: publish)
        guard let owner = session.jid?.bare, let username = owner.localpart else { throw StanzaError(.notAuthorized) }
        let limits = session.server.config.limits
        try Self.checkSize(node, of: "a node name", limits: limits)
        let items = publish.elements.filter { $0.name == "item" && $0.namespace == NS.pubsub }
        guard items.count == 1, let item = items.first else {
            throw Self.error(.badRequest, items.isEmpty ? "item-required" : "invalid-payload", text: "publish one item")
        }
        guard item.elements.count == 1, let payload = item.elements.first else {
            throw Self.error(
                .badRequest, item.elements.isEmpty ? "payload-required" : "invalid-payload",
                text: "an item holds one payload element")
        }
        let requested = try ConfigurationFields(options, formType: NS.pubsubPublishOptions, limits: limits)
        let id = item[attribute: "id"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.newItemID()
        let stored = try Self.storable(id: id, payload, limits: limits)
        let domain = session.server.domain
        return .afterStorage({ stores in
            try Self.store(stored, in: node, of: username, creating: requested.applied(to: PEPNodeConfiguration()),
                preconditions: requested, limits: limits, domain: domain, stores: stores)
        }) { audience in
            let published = Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(payload)])
            notifyPublished(published, node: node, of: owner, audience, server: session.server)
            let answer = Element(
                "publish", namespace: NS.pubsub, attributes: ["node": node],
                children: [.element(Element("item", namespace: NS.pubsub, attributes: ["id": id]))])
            return .result(Element("pubsub", namespace: NS.pubsub, children: [.element(answer)])) {
                session.server.hooks.fire(
                    PEPItemPublished(owner: owner, node: node, item: published, onBehalf: false, session: session))
            }
        }
    }

    /// A new item id: random, so that publishers who give none never
    /// replace each other's items (XEP-0060 §7.1.1).
    static func newItemID() -> String {
        Hex.encode(Crypto.randomBytes(count: 12))
    }

    /// `payload` as the item `id` to store, published now.
    ///
    /// - Throws: `bad-request` + `<invalid-payload/>` for a payload that
    ///   cannot be stored, `not-acceptable` + `<payload-too-big/>` beyond
    ///   `pep_max_item_size`, `not-acceptable` for an id longer than
    ///   `pep_max_name_size`.
    static func storable(id: String, _ payload: Element, limits: ServerConfig.Limits) throws(StanzaError) -> PEPItem {
        try checkSize(id, of: "an item id", limits: limits)
        guard let serialized = StoredStanza.serialize(payload) else {
            throw Self.error(.badRequest, "invalid-payload", text: "the payload cannot be stored")
        }
        guard serialized.utf8.count <= limits.pepMaxItemSize else {
            throw Self.error(.notAcceptable, "payload-too-big", text: "items are at most \(limits.pepMaxItemSize) bytes")
        }
        return PEPItem(id: id, payload: serialized, published: Int(Date().timeIntervalSince1970 * 1000))
    }

    /// Stores `item` in the node `node` of `username` (storage thread): a
    /// node that exists must meet `preconditions`, or is given `creating`
    /// when `enforcing`; one that does not is created with `creating`, if
    /// `username` has fewer than `pep_max_nodes`. A node's `max_items`
    /// above `pep_max_items` is lowered to it first.
    ///
    /// - Throws: `resource-constraint` when the item would take the
    ///   account's stored payloads beyond `pep_quota`.
    static func store(
        _ item: PEPItem, in node: String, of username: String, creating: PEPNodeConfiguration, enforcing: Bool = false,
        preconditions: ConfigurationFields, limits: ServerConfig.Limits, domain: String, stores: Stores
    ) throws -> Audience {
        try stores.inTransaction {
            let configuration: PEPNodeConfiguration
            let stored = try stores.pep.configuration(of: node, owner: username)
            if let stored, !enforcing {
                configuration = clamped(stored, limits: limits)
                try preconditions.checkMet(by: configuration)
            } else {
                if stored == nil { try checkRoomForANode(of: username, in: stores, limit: limits.pepMaxNodes) }
                configuration = clamped(creating, limits: limits)
            }
            try checkQuota(for: item, in: node, of: username, configuration, limit: limits.pepQuota, stores: stores)
            if configuration != stored { try stores.pep.setNode(node, of: username, configuration: configuration) }
            _ = try stores.pep.publish(item, to: node, of: username)
            return try audience(of: node, owner: username, configuration, domain: domain, in: stores)
        }
    }

    /// Throws `resource-constraint` unless the stored payloads of
    /// `username`, with `item` in place of the item of its id, fit in
    /// `limit` bytes (`pep_quota`); a node that keeps nothing takes none.
    private static func checkQuota(
        for item: PEPItem, in node: String, of username: String, _ configuration: PEPNodeConfiguration, limit: Int,
        stores: Stores
    ) throws {
        guard configuration.persistItems else { return }
        let replaced = try stores.pep.items(of: node, owner: username, ids: [item.id], limit: 1).first?.payload.utf8.count ?? 0
        guard try stores.pep.storedBytes(of: username) - replaced + item.payload.utf8.count <= limit else {
            throw StanzaError(.resourceConstraint, text: "an account's personal eventing items take at most \(limit) bytes")
        }
    }

    /// Notifies the interested of `item` (`<item id>` with its payload),
    /// just published: with the payload if the node delivers payloads,
    /// naming the owner as publisher if its `itemreply` says so.
    func notifyPublished(_ item: Element, node: String, of owner: JID, _ audience: Audience, server: ServerContext) {
        let notified = Self.eventItem(item, of: owner, audience.configuration)
        notify(Self.items(node, [notified]), node: node, of: owner, audience, server: server)
    }

    /// The `<item/>` of an event for the stored or published `item`, as
    /// the node's configuration shapes it.
    static func eventItem(_ item: Element, of owner: JID, _ configuration: PEPNodeConfiguration) -> Element {
        var notified = Element("item", namespace: NS.pubsubEvent, attributes: ["id": item[attribute: "id"] ?? ""])
        if configuration.itemReply != .none { notified[attribute: "publisher"] = owner.description }
        if configuration.deliverPayloads {
            for payload in item.elements { notified.append(payload) }
        }
        return notified
    }

    /// Throws `policy-violation` with `<max-nodes-exceeded/>` when
    /// `username` already has `limit` nodes (`pep_max_nodes`).
    static func checkRoomForANode(of username: String, in stores: Stores, limit: Int) throws {
        guard try stores.pep.nodeCount(of: username) < limit else {
            throw Self.error(.policyViolation, "max-nodes-exceeded", text: "at most \(limit) nodes per account")
        }
    }

    /// XEP-0060 §7.2: removes one item; the interested hear of it with
    /// `notify='true'` (§7.2.2.1) or when the node notifies every
    /// retraction (`pubsub#notify_retract`).
    func retract(_ retract: Element, _ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let node = try Self.node(of: retract)
        guard let owner = session.jid?.bare, let username = owner.localpart else { throw StanzaError(.notAuthorized) }
        let ids = retract.elements.filter { $0.name == "item" && $0.namespace == NS.pubsub }.compactMap { $0[attribute: "id"] }
        guard ids.count == 1, let id = ids.first, !id.isEmpty else {
            throw Self.error(.badRequest, "item-required", text: "retract one item by its id")
        }
        let asked = ["1", "true"].contains(retract[attribute: "notify"] ?? "")
        let domain = session.server.domain
        return .afterStorage({ stores in
            guard let audience = try Self.remove(id, from: node, of: username, domain: domain, stores: stores) else {
                throw StanzaError(.itemNotFound, text: "no such node or item")
            }
            return audience
        }) { audience in
            if asked || audience.configuration.notifyRetract {
                notifyRetracted(id, node: node, of: owner, audience, server: session.server)
            }
            return .result {
                session.server.hooks.fire(PEPItemRetracted(owner: owner, node: node, itemID: id, onBehalf: false, session: session))
            }
        }
    }

    /// Removes the item `id` (storage thread); nil when there is no such
    /// node or item.
    static func remove(_ id: String, from node: String, of username: String, domain: String, stores: Stores) throws -> Audience? {
        try stores.inTransaction {
            guard let configuration = try stores.pep.configuration(of: node, owner: username),
                try stores.pep.retract(id, from: node, of: username)
            else { return nil }
            return try audience(of: node, owner: username, configuration, domain: domain, in: stores)
        }
    }

    /// Tells the interested that the item `id` is gone (XEP-0060 §7.2.2.1).
    func notifyRetracted(_ id: String, node: String, of owner: JID, _ audience: Audience, server: ServerContext) {
        let retracted = Element("retract", namespace: NS.pubsubEvent, attributes: ["id": id])
        notify(Self.items(node, [retracted]), node: node, of: owner, audience, server: server)
    }

    /// XEP-0060 §8.1.2, §8.1.3: creates a node with the default
    /// configuration, or with a submitted `pubsub#node_config` form;
    /// instant nodes (no `node`) are not supported.
    func create(_ create: Element, configure: Element?, _ request: IQRequest) throws -> IQAnswer {
        guard create[attribute: "node"] != nil else {
            throw Self.error(.notAcceptable, "nodeid-required", text: "instant nodes are not supported")
        }
        let node = try Self.node(of: create)
        let username = try request.username()
        let limits = request.server.config.limits
        try Self.checkSize(node, of: "a node name", limits: limits)
        let configuration = try ConfigurationFields(configure, formType: NS.pubsubNodeConfig, limits: limits)
            .applied(to: PEPNodeConfiguration())
        return .afterStorage({ stores in
            try stores.inTransaction {
                guard try stores.pep.configuration(of: node, owner: username) == nil else {
                    throw StanzaError(.conflict, text: "the node exists")
                }
                try Self.checkRoomForANode(of: username, in: stores, limit: limits.pepMaxNodes)
                try stores.pep.setNode(node, of: username, configuration: configuration)
            }
        }) { .result() }
    }

    /// XEP-0060 §8.4: deletes a node and its items; the interested hear
    /// of it (§8.4.2), and `PEPItemRetracted` tells of each item.
    func delete(_ delete: Element, _ request: IQRequest) throws -> IQAnswer {
        try emptyNode(delete, request, event: "delete") { node, username, stores in
            _ = try stores.pep.deleteNode(node, of: username)
        }
    }

    /// XEP-0060 §8.5: removes every item of a node; the interested hear
    /// of it (§8.5.2), and `PEPItemRetracted` tells of each item.
    func purge(_ purge: Element, _ request: IQRequest) throws -> IQAnswer {
        try emptyNode(purge, request, event: "purge") { node, username, stores in
            _ = try stores.pep.purge(node, of: username)
        }
    }

    /// Empties the node `operation` names with `change`, then sends the
    /// interested `<event><EVENT node/></event>` and the owner the result,
    /// and fires `PEPItemRetracted` for each item removed.
    private func emptyNode(
        _ operation: Element, _ request: IQRequest, event name: String,
        _ change: @escaping @Sendable (String, String, Stores) throws -> Void
    ) throws -> IQAnswer {
        let session = request.session
        let node = try Self.node(of: operation)
        guard let owner = session.jid?.bare, let username = owner.localpart else { throw StanzaError(.notAuthorized) }
        let domain = session.server.domain
        return .afterStorage({ stores in
            try stores.inTransaction {
                guard let configuration = try stores.pep.configuration(of: node, owner: username) else {
                    throw StanzaError(.itemNotFound, text: "no such node")
                }
                // Read before a deletion takes the subscriptions and items with it.
                let audience = try Self.audience(of: node, owner: username, configuration, domain: domain, in: stores)
                let removed = try stores.pep.itemIDs(of: node, owner: username)
                try change(node, username, stores)
                return (audience, removed)
            }
        }) { (audience, removed) in
            let event = Element(
                "event", namespace: NS.pubsubEvent,
                children: [.element(Element(name, namespace: NS.pubsubEvent, attributes: ["node": node]))])
            notify(event, node: node, of: owner, audience, server: session.server)
            return .result {
                for id in removed {
                    session.server.hooks.fire(
                        PEPItemRetracted(owner: owner, node: node, itemID: id, onBehalf: false, session: session))
                }
            }
        }
    }

    /// Who hears of a change to the node `node` of `username` configured
    /// so: the contacts who share presence, unless only the owner may
    /// (whitelist), and the subscribers who may read it.
    static func audience(
        of node: String, owner username: String, _ configuration: PEPNodeConfiguration, domain: String, in stores: Stores
    ) throws -> Audience {
        let contacts =
            configuration.accessModel == .whitelist
            ? [] : try stores.roster.items(of: username).filter(\.state.sharesPresence).map(\.contact)
        let subscribers = try allowedSubscribers(of: node, owner: username, configuration, domain: domain, in: stores)
        return Audience(configuration: configuration, contacts: contacts, subscribers: subscribers)
    }

    /// `<event><items node>…</items></event>`.
    static func items(_ node: String, _ children: [Element]) -> Element {
        let items = Element("items", namespace: NS.pubsubEvent, attributes: ["node": node], children: children.map { .element($0) })
        return Element("event", namespace: NS.pubsubEvent, children: [.element(items)])
    }
}
