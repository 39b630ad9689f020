/// A `PEPStore` in dictionaries, for tests and for servers that need
/// nothing to survive a restart. `Stores(accounts:)` deletes an account's
/// nodes, and its subscriptions to others' nodes, with it.
public final class InMemoryPEPStore: PEPStore, AccountScopedStore {
    private struct Node {
        var configuration: PEPNodeConfiguration
        /// Oldest first.
        var items: [PEPItem] = []
        /// In the order they subscribed.
        var subscribers: [PEPSubscriber] = []

        /// Keeps the newest `maxItems` items, or none without `persistItems`.
        mutating func trim() {
            let keep = configuration.persistItems ? configuration.maxItems : 0
            if items.count > keep { items.removeFirst(items.count - keep) }
        }
    }

    /// Nodes by the UTF-8 bytes of their names, as SQLite compares text.
    private var nodes: PerAccount<[[UInt8]: Node]>
    private let accounts: any AccountStore

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        nodes = PerAccount(accounts: accounts)
        self.accounts = accounts
    }

    public func configuration(of node: String, owner username: String) -> PEPNodeConfiguration? {
        nodes[username]?[Array(node.utf8)]?.configuration
    }

    public func nodeCount(of username: String) -> Int {
        nodes[username]?.count ?? 0
    }

    public func setNode(_ node: String, of username: String, configuration: PEPNodeConfiguration) throws {
        var owned = nodes[username] ?? [:]
        var entry = owned[Array(node.utf8)] ?? Node(configuration: configuration)
        entry.configuration = configuration
        entry.trim()
        owned[Array(node.utf8)] = entry
        try nodes.set(owned, for: username)
    }

    public func deleteNode(_ node: String, of username: String) throws -> Bool {
        guard var owned = nodes[username], owned.removeValue(forKey: Array(node.utf8)) != nil else { return false }
        try nodes.set(owned, for: username)
        return true
    }

    public func publish(_ item: PEPItem, to node: String, of username: String) throws -> Bool {
        try update(node, of: username) { entry in
            entry.items.removeAll { $0.id.utf8.elementsEqual(item.id.utf8) }
            entry.items.append(item)
            entry.trim()
            return true
        } ?? false
    }

    public func items(of node: String, owner username: String, ids: [String]?, limit: Int?) -> [PEPItem] {
        var items = (nodes[username]?[Array(node.utf8)]?.items ?? []).reversed().filter { item in
            ids?.contains { $0.utf8.elementsEqual(item.id.utf8) } ?? true
        }
        if let limit, items.count > limit { items.removeLast(items.count - limit) }
        return items
    }

    public func retract(_ id: String, from node: String, of username: String) throws -> Bool {
        try update(node, of: username) { entry in
            guard let index = entry.items.firstIndex(where: { $0.id.utf8.elementsEqual(id.utf8) }) else { return false }
            entry.items.remove(at: index)
            return true
        } ?? false
    }

    public func purge(_ node: String, of username: String) throws -> Bool {
        try update(node, of: username) { $0.items.removeAll() } != nil
    }

    public func nodes(of username: String) -> [PEPNode] {
        (nodes[username] ?? [:]).sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { name, node in
            PEPNode(name: String(decoding: name, as: UTF8.self), configuration: node.configuration)
        }
    }

    public func subscribe(_ subscriber: PEPSubscriber, to node: String, of username: String) throws -> Bool {
        guard try accounts.accountExists(subscriber.username) else {
            throw UnknownAccountError(username: subscriber.username)
        }
        return try update(node, of: username) { entry -> Void in
            if !entry.subscribers.contains(where: { Self.same($0, subscriber) }) { entry.subscribers.append(subscriber) }
        } != nil
    }

    public func unsubscribe(_ subscriber: PEPSubscriber, from node: String, of username: String) throws -> Bool {
        try update(node, of: username) { entry in
            guard let index = entry.subscribers.firstIndex(where: { Self.same($0, subscriber) }) else { return false }
            entry.subscribers.remove(at: index)
            return true
        } ?? false
    }

    /// Whether two subscribers are the same, byte for byte.
    private static func same(_ one: PEPSubscriber, _ other: PEPSubscriber) -> Bool {
        one.username.utf8.elementsEqual(other.username.utf8)
            && (one.resource.map { Array($0.utf8) } == other.resource.map { Array($0.utf8) })
    }

    public func subscribers(of node: String, owner username: String) -> [PEPSubscriber] {
        nodes[username]?[Array(node.utf8)]?.subscribers ?? []
    }

    public func lastItems(of username: String, nodes names: [String]?) -> [PEPLastItem] {
        let wanted = names.map { Set($0.map { Array($0.utf8) }) }
        return (nodes[username] ?? [:]).sorted { $0.key.lexicographicallyPrecedes($1.key) }.compactMap { name, node in
            guard wanted?.contains(name) ?? true else { return nil }
            return node.items.last.map {
                PEPLastItem(node: String(decoding: name, as: UTF8.self), configuration: node.configuration, item: $0)
            }
        }
    }

    public func itemIDs(of node: String, owner username: String) -> [String] {
        (nodes[username]?[Array(node.utf8)]?.items ?? []).reversed().map(\.id)
    }

    public func storedBytes(of username: String) -> Int {
        (nodes[username] ?? [:]).values.reduce(0) { total, node in
            node.items.reduce(total) { $0 + $1.payload.utf8.count }
        }
    }

    public func subscriptionCount(of subscriber: String) -> Int {
        let isSubscriber = { (other: PEPSubscriber) in other.username.utf8.elementsEqual(subscriber.utf8) }
        var count = 0
        // `updateEach` is the only walk over every account; it changes nothing here.
        nodes.updateEach { owned in
            for node in owned.values { count += node.subscribers.count(where: isSubscriber) }
        }
        let own = (nodes[subscriber] ?? [:]).values.reduce(0) { $0 + $1.subscribers.count(where: isSubscriber) }
        return count - own
    }

    func removeAll(of username: String) {
        nodes.removeAll(of: username)
        nodes.updateEach { owned in
            for name in owned.keys { owned[name]?.subscribers.removeAll { $0.username.utf8.elementsEqual(username.utf8) } }
        }
    }

    /// Runs `change` on the node `node` of `username` and keeps the result;
    /// nil when there is no such node.
    private func update<Result>(_ node: String, of username: String, _ change: (inout Node) -> Result) throws -> Result? {
        guard var owned = nodes[username], var entry = owned[Array(node.utf8)] else { return nil }
        let result = change(&entry)
        owned[Array(node.utf8)] = entry
        try nodes.set(owned, for: username)
        return result
    }
}
