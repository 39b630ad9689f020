import SQLiteKit

/// A `PEPStore` in the tables `pep_nodes`, `pep_items` and
/// `pep_subscriptions` (migrations `0010-pep`, `0013-pep-configuration`,
/// `0014-pep-subscriptions`): a row per node, unique by `(account_id,
/// name)`; a row per item whose rowid `sequence` orders the items of a
/// node by their last publication, newest last; a row per subscription,
/// unique by node, subscribing account and resource (empty for the bare
/// JID). Counts and sums (`storedBytes`, `subscriptionCount`) are single
/// statements over the account's rows, through the tables' indexes.
public final class SQLitePEPStore: PEPStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func configuration(of node: String, owner username: String) throws -> PEPNodeConfiguration? {
        try self.node(node, of: username)?.configuration
    }

    public func setNode(_ node: String, of username: String, configuration: PEPNodeConfiguration) throws {
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            try database.run(
                """
                INSERT INTO pep_nodes (account_id, name, \(Self.columns())) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (account_id, name) DO UPDATE SET access_model = excluded.access_model,
                    max_items = excluded.max_items, persist_items = excluded.persist_items,
                    send_last_published_item = excluded.send_last_published_item,
                    notify_retract = excluded.notify_retract, deliver_payloads = excluded.deliver_payloads,
                    itemreply = excluded.itemreply, title = excluded.title
                """, accountID, node, configuration.accessModel.rawValue, configuration.maxItems,
                configuration.persistItems ? 1 : 0, configuration.lastItemDelivery.rawValue,
                configuration.notifyRetract ? 1 : 0, configuration.deliverPayloads ? 1 : 0,
                configuration.itemReply.rawValue, configuration.title)
            if let stored = try self.node(node, of: username) { try trim(stored) }
        }
    }

    public func deleteNode(_ node: String, of username: String) throws -> Bool {
        try database.run(
            """
            DELETE FROM pep_nodes WHERE name = ? AND account_id = (SELECT id FROM accounts WHERE username = ?)
            """, node, username) > 0
    }

    public func publish(_ item: PEPItem, to node: String, of username: String) throws -> Bool {
        try database.transaction {
            guard let stored = try self.node(node, of: username) else { return false }
            try database.run("DELETE FROM pep_items WHERE node_id = ? AND item_id = ?", stored.id, item.id)
            if stored.configuration.persistItems {
                try database.run(
                    "INSERT INTO pep_items (node_id, item_id, payload, published) VALUES (?, ?, ?, ?)", stored.id,
                    item.id, item.payload, item.published)
                try trim(stored)
            }
            return true
        }
    }

    public func items(of node: String, owner username: String, ids: [String]?, limit: Int?) throws -> [PEPItem] {
        // One statement for any number of ids: they arrive as a JSON array,
        // or NULL for all. A negative LIMIT is none.
        let sql = """
            SELECT i.item_id, i.payload, i.published FROM pep_items AS i
            JOIN pep_nodes AS n ON n.id = i.node_id JOIN accounts AS a ON a.id = n.account_id
            WHERE a.username = ? AND n.name = ?
                AND (?3 IS NULL OR i.item_id IN (SELECT value FROM json_each(?3)))
            ORDER BY i.sequence DESC LIMIT ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, node, try ids.map(JSONText.array), limit ?? -1)
            var items: [PEPItem] = []
            while try statement.step() {
                items.append(
                    PEPItem(
                        id: statement.string(at: 0) ?? "", payload: statement.string(at: 1) ?? "",
                        published: statement.int(at: 2)))
            }
            return items
        }
    }

    public func retract(_ id: String, from node: String, of username: String) throws -> Bool {
        try database.run(
            """
            DELETE FROM pep_items WHERE item_id = ? AND node_id = (
                SELECT n.id FROM pep_nodes AS n JOIN accounts AS a ON a.id = n.account_id
                WHERE a.username = ? AND n.name = ?)
            """, id, username, node) > 0
    }

    public func purge(_ node: String, of username: String) throws -> Bool {
        try database.transaction {
            guard let stored = try self.node(node, of: username) else { return false }
            try database.run("DELETE FROM pep_items WHERE node_id = ?", stored.id)
            return true
        }
    }

    public func nodes(of username: String) throws -> [PEPNode] {
        let sql = """
            SELECT n.name, \(Self.columns("n.")) FROM pep_nodes AS n JOIN accounts AS a ON a.id = n.account_id
            WHERE a.username = ? ORDER BY n.name
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            var nodes: [PEPNode] = []
            while try statement.step() {
                nodes.append(PEPNode(name: statement.string(at: 0) ?? "", configuration: Self.configuration(statement, from: 1)))
            }
            return nodes
        }
    }

    public func subscribe(_ subscriber: PEPSubscriber, to node: String, of username: String) throws -> Bool {
        try database.transaction {
            guard let subscriberID = try database.accountID(of: subscriber.username) else {
                throw UnknownAccountError(username: subscriber.username)
            }
            guard let stored = try self.node(node, of: username) else { return false }
            try database.run(
                "INSERT OR IGNORE INTO pep_subscriptions (node_id, subscriber_id, resource) VALUES (?, ?, ?)", stored.id,
                subscriberID, subscriber.resource ?? "")
            return true
        }
    }

    public func unsubscribe(_ subscriber: PEPSubscriber, from node: String, of username: String) throws -> Bool {
        try database.run(
            """
            DELETE FROM pep_subscriptions
            WHERE subscriber_id = (SELECT id FROM accounts WHERE username = ?) AND resource = ? AND node_id = (
                SELECT n.id FROM pep_nodes AS n JOIN accounts AS a ON a.id = n.account_id
                WHERE a.username = ? AND n.name = ?)
            """, subscriber.username, subscriber.resource ?? "", username, node) > 0
    }

    public func subscribers(of node: String, owner username: String) throws -> [PEPSubscriber] {
        let sql = """
            SELECT sa.username, s.resource FROM pep_subscriptions AS s JOIN accounts AS sa ON sa.id = s.subscriber_id
            JOIN pep_nodes AS n ON n.id = s.node_id JOIN accounts AS a ON a.id = n.account_id
            WHERE a.username = ? AND n.name = ? ORDER BY s.sequence
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, node)
            var subscribers: [PEPSubscriber] = []
            while try statement.step() {
                let resource = statement.string(at: 1) ?? ""
                subscribers.append(
                    PEPSubscriber(username: statement.string(at: 0) ?? "", resource: resource.isEmpty ? nil : resource))
            }
            return subscribers
        }
    }

    public func nodeCount(of username: String) throws -> Int {
        try count("SELECT count(*) FROM pep_nodes AS n JOIN accounts AS a ON a.id = n.account_id WHERE a.username = ?", username)
    }

    public func lastItems(of username: String, nodes: [String]?) throws -> [PEPLastItem] {
        // The names arrive as a JSON array, or NULL for all nodes.
        let sql = """
            SELECT n.name, \(Self.columns("n.")), i.item_id, i.payload, i.published
            FROM pep_nodes AS n JOIN accounts AS a ON a.id = n.account_id
            JOIN pep_items AS i ON i.sequence = (SELECT max(sequence) FROM pep_items WHERE node_id = n.id)
            WHERE a.username = ?1 AND (?2 IS NULL OR n.name IN (SELECT value FROM json_each(?2))) ORDER BY n.name
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, try nodes.map(JSONText.array))
            var items: [PEPLastItem] = []
            while try statement.step() {
                items.append(
                    PEPLastItem(
                        node: statement.string(at: 0) ?? "", configuration: Self.configuration(statement, from: 1),
                        item: PEPItem(
                            id: statement.string(at: Self.columnCount + 1) ?? "",
                            payload: statement.string(at: Self.columnCount + 2) ?? "",
                            published: statement.int(at: Self.columnCount + 3))))
            }
            return items
        }
    }

    public func itemIDs(of node: String, owner username: String) throws -> [String] {
        let sql = """
            SELECT i.item_id FROM pep_items AS i
            JOIN pep_nodes AS n ON n.id = i.node_id JOIN accounts AS a ON a.id = n.account_id
            WHERE a.username = ? AND n.name = ? ORDER BY i.sequence DESC
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, node)
            var ids: [String] = []
            while try statement.step() { ids.append(statement.string(at: 0) ?? "") }
            return ids
        }
    }

    public func storedBytes(of username: String) throws -> Int {
        try count(
            """
            SELECT coalesce(sum(length(CAST(i.payload AS BLOB))), 0) FROM pep_items AS i
            JOIN pep_nodes AS n ON n.id = i.node_id JOIN accounts AS a ON a.id = n.account_id
            WHERE a.username = ?
            """, username)
    }

    public func subscriptionCount(of subscriber: String) throws -> Int {
        try count(
            """
            SELECT count(*) FROM pep_subscriptions AS s JOIN pep_nodes AS n ON n.id = s.node_id
            WHERE s.subscriber_id = (SELECT id FROM accounts WHERE username = ?) AND n.account_id != s.subscriber_id
            """, subscriber)
    }

    /// The single integer `sql` selects for `username`.
    private func count(_ sql: String, _ username: String) throws -> Int {
        try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    /// The row id and configuration of a node.
    private func node(_ name: String, of username: String) throws -> (id: Int64, configuration: PEPNodeConfiguration)? {
        let sql = """
            SELECT n.id, \(Self.columns("n."))
            FROM pep_nodes AS n JOIN accounts AS a ON a.id = n.account_id
            WHERE a.username = ? AND n.name = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, name)
            guard try statement.step() else { return nil }
            return (statement.int64(at: 0), Self.configuration(statement, from: 1))
        }
    }

    /// The configuration's columns, in the order `configuration(_:from:)`
    /// reads them.
    private static let columnNames = [
        "access_model", "max_items", "persist_items", "send_last_published_item", "notify_retract",
        "deliver_payloads", "itemreply", "title",
    ]

    /// `columnNames`, each after `prefix`, for a SELECT or INSERT.
    private static func columns(_ prefix: String = "") -> String {
        columnNames.map { prefix + $0 }.joined(separator: ", ")
    }

    /// How many columns `columns(_:)` names.
    private static var columnCount: Int { columnNames.count }

    /// The configuration in the columns of `columns(_:)` from `column` on;
    /// the table's checks keep them valid.
    private static func configuration(_ statement: Statement, from column: Int) -> PEPNodeConfiguration {
        typealias Configuration = PEPNodeConfiguration
        return Configuration(
            accessModel: Configuration.AccessModel(rawValue: statement.string(at: column) ?? "") ?? .presence,
            maxItems: max(1, statement.int(at: column + 1)), persistItems: statement.int(at: column + 2) != 0,
            lastItemDelivery: Configuration.LastItemDelivery(rawValue: statement.string(at: column + 3) ?? "")
                ?? .onSubscriptionAndPresence,
            notifyRetract: statement.int(at: column + 4) != 0, deliverPayloads: statement.int(at: column + 5) != 0,
            itemReply: Configuration.ItemReply(rawValue: statement.string(at: column + 6) ?? "") ?? .none,
            title: statement.string(at: column + 7) ?? "")
    }

    /// Drops the oldest items of a node beyond its `maxItems`, or all
    /// without `persistItems`.
    private func trim(_ node: (id: Int64, configuration: PEPNodeConfiguration)) throws {
        let keep = node.configuration.persistItems ? node.configuration.maxItems : 0
        try database.run(
            """
            DELETE FROM pep_items WHERE node_id = ?1 AND sequence NOT IN (
                SELECT sequence FROM pep_items WHERE node_id = ?1 ORDER BY sequence DESC LIMIT ?2)
            """, node.id, keep)
    }
}
