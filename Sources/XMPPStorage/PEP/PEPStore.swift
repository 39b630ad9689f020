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
    }

    /// `pubsub#access_model`.
    public var accessModel: AccessModel
    /// `pubsub#max_items`: how many items the node keeps, newest first; at least 1.
    public var maxItems: Int
    /// `pubsub#persist_items`: whether items are kept at all, or only notified.
    public var persistItems: Bool

    /// A configuration from its fields.
    public init(accessModel: AccessModel = .presence, maxItems: Int = 1, persistItems: Bool = true) {
        precondition(maxItems > 0, "a node keeps at least one item")
        self.accessModel = accessModel
        self.maxItems = maxItems
        self.persistItems = persistItems
    }
}

/// A published item: its id and its payload, serialized XML.
public struct PEPItem: Sendable, Hashable {
    /// The item id, unique within its node.
    public var id: String
    /// The payload element, serialized.
    public var payload: String

    /// An item from its id and serialized payload.
    public init(id: String, payload: String) {
        self.id = id
        self.payload = payload
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

/// The Personal Eventing (XEP-0163) nodes of the server's users and their
/// items: every account is a pubsub service with nodes named by the owner.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames, node names and item ids are compared byte for byte. An
/// unknown username reads as an account without nodes;
/// `createNode(_:of:configuration:)` throws `UnknownAccountError` for it.
/// Deleting the account deletes its nodes and items.
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

    /// The newest item of each node of `username` that has one, sorted by
    /// node name.
    func lastItems(of username: String) throws -> [PEPLastItem]

    /// How many nodes `username` has (0 for an unknown account).
    func nodeCount(of username: String) throws -> Int
}
