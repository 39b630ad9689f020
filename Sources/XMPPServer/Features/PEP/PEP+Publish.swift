import XMPPCore
import XMPPStorage

extension PEP {
    /// What a change to a node needs for its notifications: the node's
    /// configuration and the owner's contacts who share presence.
    struct Audience: Sendable {
        var configuration: PEPNodeConfiguration
        var contacts: [String]
    }

    /// XEP-0060 §7.1: publishes one item, creating the node with the
    /// defaults and the publish-options, or checking them against its
    /// configuration (§7.1.5).
    func publish(_ publish: Element, options: Element?, _ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let node = try Self.node(of: publish)
        guard let owner = session.jid?.bare, let username = owner.localpart else { throw StanzaError(.notAuthorized) }
        let items = publish.elements.filter { $0.name == "item" && $0.namespace == NS.pubsub }
        guard items.count == 1, let item = items.first else {
            throw Self.error(.badRequest, items.isEmpty ? "item-required" : "invalid-payload", text: "publish one item")
        }
        guard item.elements.count == 1, let payload = item.elements.first else {
            throw Self.error(
                .badRequest, item.elements.isEmpty ? "payload-required" : "invalid-payload",
                text: "an item holds one payload element")
        }
        let requested = try PublishOptions(options, maxItemsLimit: session.server.config.limits.pepMaxItems)
        guard let serialized = StoredStanza.serialize(payload) else {
            throw Self.error(.badRequest, "invalid-payload", text: "the payload cannot be stored")
        }
        let limits = session.server.config.limits
        guard serialized.utf8.count <= limits.pepMaxItemSize else {
            throw Self.error(.notAcceptable, "payload-too-big", text: "items are at most \(limits.pepMaxItemSize) bytes")
        }
        let id = item[attribute: "id"].flatMap { $0.isEmpty ? nil : $0 } ?? Hex.encode(Crypto.randomBytes(count: 12))
        return .afterStorage({ stores -> Audience in
            try stores.inTransaction {
                let configuration: PEPNodeConfiguration
                if let existing = try stores.pep.configuration(of: node, owner: username) {
                    guard requested.areMet(by: existing) else {
                        throw Self.error(
                            .conflict, "precondition-not-met", text: "the node's configuration differs from the publish-options")
                    }
                    configuration = existing
                } else {
                    try Self.checkRoomForANode(of: username, in: stores, limit: limits.pepMaxNodes)
                    configuration = requested.applied(to: PEPNodeConfiguration())
                    try stores.pep.setNode(node, of: username, configuration: configuration)
                }
                _ = try stores.pep.publish(PEPItem(id: id, payload: serialized), to: node, of: username)
                return Audience(configuration: configuration, contacts: try Self.contacts(of: username, in: stores))
            }
        }) { audience in
            let published = Element(
                "publish", namespace: NS.pubsub, attributes: ["node": node],
                children: [.element(Element("item", namespace: NS.pubsub, attributes: ["id": id]))])
            return .result(Element("pubsub", namespace: NS.pubsub, children: [.element(published)])) {
                var notified = Element("item", namespace: NS.pubsubEvent, attributes: ["id": id])
                notified.append(payload)
                notify(Self.items(node, [notified]), node: node, of: owner, audience, server: session.server)
            }
        }
    }

    /// Throws `policy-violation` with `<max-nodes-exceeded/>` when
    /// `username` already has `limit` nodes (`pep_max_nodes`).
    private static func checkRoomForANode(of username: String, in stores: Stores, limit: Int) throws {
        guard try stores.pep.nodeCount(of: username) < limit else {
            throw Self.error(.policyViolation, "max-nodes-exceeded", text: "at most \(limit) nodes per account")
        }
    }

    /// XEP-0060 §7.2: removes one item; with `notify='true'` the
    /// interested hear of it (§7.2.2.1).
    func retract(_ retract: Element, _ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let node = try Self.node(of: retract)
        guard let owner = session.jid?.bare, let username = owner.localpart else { throw StanzaError(.notAuthorized) }
        let ids = retract.elements.filter { $0.name == "item" && $0.namespace == NS.pubsub }.compactMap { $0[attribute: "id"] }
        guard ids.count == 1, let id = ids.first, !id.isEmpty else {
            throw Self.error(.badRequest, "item-required", text: "retract one item by its id")
        }
        let notifies = ["1", "true"].contains(retract[attribute: "notify"] ?? "")
        return .afterStorage({ stores in
            guard let configuration = try stores.pep.configuration(of: node, owner: username),
                try stores.pep.retract(id, from: node, of: username)
            else { throw StanzaError(.itemNotFound, text: "no such node or item") }
            return Audience(configuration: configuration, contacts: notifies ? try Self.contacts(of: username, in: stores) : [])
        }) { audience in
            .result {
                guard notifies else { return }
                let retracted = Element("retract", namespace: NS.pubsubEvent, attributes: ["id": id])
                notify(Self.items(node, [retracted]), node: node, of: owner, audience, server: session.server)
            }
        }
    }

    /// XEP-0060 §8.1.2: creates a node with the default configuration;
    /// creating and configuring at once (§8.1.3) and instant nodes
    /// (§8.1.2, no `node`) are not supported.
    func create(_ create: Element, configure: Element?, _ request: IQRequest) throws -> IQAnswer {
        guard create[attribute: "node"] != nil else {
            throw Self.error(.notAcceptable, "nodeid-required", text: "instant nodes are not supported")
        }
        guard configure?.child("x", namespace: NS.dataForms) == nil else { throw Self.unsupported("create-and-configure") }
        let node = try Self.node(of: create)
        guard let username = request.session.jid?.localpart else { throw StanzaError(.notAuthorized) }
        let limit = request.session.server.config.limits.pepMaxNodes
        return .afterStorage({ stores in
            try stores.inTransaction {
                guard try stores.pep.configuration(of: node, owner: username) == nil else {
                    throw StanzaError(.conflict, text: "the node exists")
                }
                try Self.checkRoomForANode(of: username, in: stores, limit: limit)
                try stores.pep.setNode(node, of: username, configuration: PEPNodeConfiguration())
            }
        }) { .result() }
    }

    /// XEP-0060 §8.4: deletes a node and its items; the interested hear
    /// of it (§8.4.2).
    func delete(_ delete: Element, _ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let node = try Self.node(of: delete)
        guard let owner = session.jid?.bare, let username = owner.localpart else { throw StanzaError(.notAuthorized) }
        return .afterStorage({ stores in
            try stores.inTransaction {
                guard let configuration = try stores.pep.configuration(of: node, owner: username) else {
                    throw StanzaError(.itemNotFound, text: "no such node")
                }
                _ = try stores.pep.deleteNode(node, of: username)
                return Audience(configuration: configuration, contacts: try Self.contacts(of: username, in: stores))
            }
        }) { audience in
            .result {
                let event = Element(
                    "event", namespace: NS.pubsubEvent,
                    children: [.element(Element("delete", namespace: NS.pubsubEvent, attributes: ["node": node]))])
                notify(event, node: node, of: owner, audience, server: session.server)
            }
        }
    }

    /// The bare JIDs of the contacts `username` shares presence with
    /// (`from` or `both`): who may get the events of a `presence` node.
    static func contacts(of username: String, in stores: Stores) throws -> [String] {
        try stores.roster.items(of: username).filter(\.state.sharesPresence).map(\.contact)
    }

    /// `<event><items node>…</items></event>`.
    static func items(_ node: String, _ children: [Element]) -> Element {
        let items = Element("items", namespace: NS.pubsubEvent, attributes: ["node": node], children: children.map { .element($0) })
        return Element("event", namespace: NS.pubsubEvent, children: [.element(items)])
    }
}
