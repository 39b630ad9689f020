/// The configuration Swiftlet keeps for a PEP node: the XEP-0060 §16.4
/// `pubsub#node_config` fields a user may choose (XEP-0163 §5 fixes the
/// others).
public struct PEPNodeConfiguration: Sendable, Hashable {
    /// Who may retrieve items and get notifications (XEP-0060 §4.5).
    public enum AccessModel: String, Sendable, CaseIterable {
        /// The owner and contacts with a presence subscription to the owner
        /// (`from` or `both` in the owner's roster): PEP's default.
        case presence
        /// Anyone.
        case open
        /// The owner only: the whitelist of a PEP node holds its owner
        /// (XEP-0223's private data).
        case whitelist
    }

    /// When the last published item goes to a new subscriber (XEP-0060
    /// §16.4 `pubsub#send_last_published_item`).
    public enum LastItemDelivery: String, Sendable, CaseIterable {
        /// Never: only new publications are notified.
        case never
        /// When the subscription begins.
        case onSubscription = "on_sub"
        /// When the subscription begins and when a subscriber's resource
        /// becomes available or interested (XEP-0163 §4.3.4): PEP's default.
        case onSubscriptionAndPresence = "on_sub_and_presence"
    }

    /// Whose JID notifications name as the item's `publisher` (XEP-0060
    /// §16.4 `pubsub#itemreply`); in PEP the owner is the only publisher.
    public enum ItemReply: String, Sendable, CaseIterable {
        /// No `publisher` attribute.
        case none
        /// The owner's bare JID.
        case owner
        /// The publisher's bare JID (the owner's, in PEP).
        case publisher
    }

    /// `pubsub#access_model`.
    public var accessModel: AccessModel
    /// `pubsub#max_items`: how many items the node keeps, newest first; at least 1.
    public var maxItems: Int
    /// `pubsub#persist_items`: whether items are kept at all, or only notified.
    public var persistItems: Bool
    /// `pubsub#send_last_published_item`.
    public var lastItemDelivery: LastItemDelivery
    /// `pubsub#notify_retract`: whether every retraction is notified, not
    /// only those asked for with `notify='true'`.
    public var notifyRetract: Bool
    /// `pubsub#deliver_payloads`: whether notifications carry the payload
    /// or only the item's id.
    public var deliverPayloads: Bool
    /// `pubsub#itemreply`.
    public var itemReply: ItemReply
    /// `pubsub#title`, also the node's name in disco#items; empty for none.
    public var title: String

    /// A configuration from its fields; what is left out has PEP's default.
    public init(
        accessModel: AccessModel = .presence, maxItems: Int = 1, persistItems: Bool = true,
        lastItemDelivery: LastItemDelivery = .onSubscriptionAndPresence, notifyRetract: Bool = true,
        deliverPayloads: Bool = true, itemReply: ItemReply = .none, title: String = ""
    ) {
        precondition(maxItems > 0, "a node keeps at least one item")
        self.accessModel = accessModel
        self.maxItems = maxItems
        self.persistItems = persistItems
        self.lastItemDelivery = lastItemDelivery
        self.notifyRetract = notifyRetract
        self.deliverPayloads = deliverPayloads
        self.itemReply = itemReply
        self.title = title
    }
}

/// A node's name and configuration, as listed in disco#items.
public struct PEPNode: Sendable, Hashable {
    /// The node's name.
    public var name: String
    /// Its configuration.
    public var configuration: PEPNodeConfiguration

    /// A node from its parts.
    public init(name: String, configuration: PEPNodeConfiguration) {
        self.name = name
        self.configuration = configuration
    }
}

/// A published item: its id, its payload, serialized XML, and when it
/// was published.
public struct PEPItem: Sendable, Hashable {
    /// The item id, unique within its node.
    public var id: String
    /// The payload element, serialized.
    public var payload: String
    /// When it was published, in milliseconds since 1970 (UTC): the stamp
    /// of the `<delay/>` on it when it is sent later.
    public var published: Int

    /// An item from its id, serialized payload and publication time.
    public init(id: String, payload: String, published: Int = 0) {
        self.id = id
        self.payload = payload
        self.published = published
    }
}

/// A node with its newest item, for sending the last published items
/// (XEP-0163 §4.3.4).
public struct PEPLastItem: Sendable, Hashable {
    /// The node's name.
    public var node: String
    /// Its configuration.
    public var configuration: PEPNodeConfiguration
    /// Its newest item.
    public var item: PEPItem

    /// A node's last item.
    public init(node: String, configuration: PEPNodeConfiguration, item: PEPItem) {
        self.node = node
        self.configuration = configuration
        self.item = item
    }
}

/// An account subscribed to a PEP node (XEP-0060 §6.1): all of its
/// resources, or one. Subscribers are the server's own users, so their
/// subscriptions go with their accounts.
public struct PEPSubscriber: Sendable, Hashable {
    /// The subscribed account.
    public var username: String
    /// The subscribed resource, or nil for the bare JID.
    public var resource: String?

    /// A subscriber from its parts.
    public init(username: String, resource: String? = nil) {
        self.username = username
        self.resource = resource
    }
}

/// The Personal Eventing (XEP-0163) nodes of the server's users and their
/// items: every account is a pubsub service with nodes named by the owner.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames, node names and item ids are compared byte for byte. An
/// unknown username reads as an account without nodes;
/// `setNode(_:of:configuration:)` throws `UnknownAccountError` for it.
/// Deleting the account deletes its nodes with their items and
/// subscriptions, and its subscriptions to others' nodes.
public protocol PEPStore: AnyObject {
    /// The configuration of the node `node` of `username`, or nil when the
    /// node does not exist.
    func configuration(of node: String, owner username: String) throws -> PEPNodeConfiguration?

    /// Creates the node `node` of `username`, or replaces its
    /// configuration; then drops the oldest items beyond its `maxItems`
    /// (all of them without `persistItems`).
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func setNode(_ node: String, of username: String, configuration: PEPNodeConfiguration) throws

    /// Deletes the node `node` of `username` with its items.
    ///
    /// - Returns: Whether there was such a node.
    func deleteNode(_ node: String, of username: String) throws -> Bool

    /// Stores `item` as the newest of the node `node` of `username`,
    /// replacing an item with the same id, and drops the oldest items
    /// beyond the node's `maxItems`. A node without `persistItems` keeps
    /// nothing.
    ///
    /// - Returns: False, storing nothing, when the node does not exist.
    func publish(_ item: PEPItem, to node: String, of username: String) throws -> Bool

    /// Items of the node `node` of `username`, newest first: the `ids`
    /// that exist (all items when nil), at most `limit` of them (no
    /// limit when nil). Empty when the node does not exist.
    func items(of node: String, owner username: String, ids: [String]?, limit: Int?) throws -> [PEPItem]

    /// Removes the item `id` from the node `node` of `username`.
    ///
    /// - Returns: Whether there was such an item.
    func retract(_ id: String, from node: String, of username: String) throws -> Bool

    /// Removes every item of the node `node` of `username`, keeping the node.
    ///
    /// - Returns: Whether there was such a node.
    func purge(_ node: String, of username: String) throws -> Bool

    /// The nodes of `username`, sorted by name.
    func nodes(of username: String) throws -> [PEPNode]

    /// Subscribes `subscriber` to the node `node` of `username` (XEP-0060
    /// §6.1); subscribing again changes nothing.
    ///
    /// - Returns: False when there is no such node.
    /// - Throws: `UnknownAccountError` if the subscriber has no account.
    func subscribe(_ subscriber: PEPSubscriber, to node: String, of username: String) throws -> Bool

    /// Ends the subscription of `subscriber` to the node `node` of `username`.
    ///
    /// - Returns: Whether there was such a subscription.
    func unsubscribe(_ subscriber: PEPSubscriber, from node: String, of username: String) throws -> Bool

    /// The subscribers of the node `node` of `username`, in the order
    /// they subscribed; empty when there is no such node.
    func subscribers(of node: String, owner username: String) throws -> [PEPSubscriber]

    /// The newest item of each node of `username` that has one, sorted by
    /// node name: of the nodes named in `nodes`, or of all when nil.
    func lastItems(of username: String, nodes: [String]?) throws -> [PEPLastItem]

    /// The ids of the items of the node `node` of `username`, newest
    /// first; empty when the node does not exist.
    func itemIDs(of node: String, owner username: String) throws -> [String]

    /// How many bytes the stored payloads of every node of `username`
    /// take, counted in UTF-8 (0 for an unknown account).
    func storedBytes(of username: String) throws -> Int

    /// How many subscriptions `subscriber` holds, every resource counted,
    /// to the nodes of other accounts than its own.
    func subscriptionCount(of subscriber: String) throws -> Int

    /// How many nodes `username` has (0 for an unknown account).
    func nodeCount(of username: String) throws -> Int
}
