/// A `PEPStore` in dictionaries, for tests and for servers that need
/// nothing to survive a restart. `Stores(accounts:)` deletes an account's
/// nodes with it.
public final class InMemoryPEPStore: PEPStore, AccountScopedStore {
    private struct Node {
        var configuration: PEPNodeConfiguration
        /// Oldest first.
        var items: [PEPItem] = []
        /// The subscribed JIDs, in the order they subscribed.
        var subscribers: [String] = []

        /// Keeps the newest `maxItems` items, or none without `persistItems`.
        mutating func trim() {
            let keep = configuration.persistItems ? configuration.maxItems : 0
            if items.count > keep { items.removeFirst(items.count - keep) }
        }
    }

    /// Nodes by the UTF-8 bytes of their names, as SQLite compares text.
    private var nodes: PerAccount<[[UInt8]: Node]>

    /// Creates an empty store for the users of `accounts`.
    public init(accounts: any AccountStore) {
        nodes = PerAccount(accounts: accounts)
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

    public func subscribe(_ jid: String, to node: String, of username: String) throws -> Bool {
        try update(node, of: username) { entry -> Void in
            if !entry.subscribers.contains(where: { $0.utf8.elementsEqual(jid.utf8) }) { entry.subscribers.append(jid) }
        } != nil
    }

    public func unsubscribe(_ jid: String, from node: String, of username: String) throws -> Bool {
        try update(node, of: username) { entry in
            guard let index = entry.subscribers.firstIndex(where: { $0.utf8.elementsEqual(jid.utf8) }) else { return false }
            entry.subscribers.remove(at: index)
            return true
        } ?? false
    }

    public func subscribers(of node: String, owner username: String) -> [String] {
        nodes[username]?[Array(node.utf8)]?.subscribers ?? []
    }

    public func lastItems(of username: String) -> [PEPLastItem] {
        (nodes[username] ?? [:]).sorted { $0.key.lexicographicallyPrecedes($1.key) }.compactMap { name, node in
            node.items.last.map {
                PEPLastItem(node: String(decoding: name, as: UTF8.self), configuration: node.configuration, item: $0)
            }
        }
    }

    func removeAll(of username: String) {
        nodes.removeAll(of: username)
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
