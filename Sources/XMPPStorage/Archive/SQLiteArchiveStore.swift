import Foundation

/// An `ArchiveStore` in the tables `archive_messages` and
/// `archive_preferences` (migration `0004-archive`).
///
/// The rowid is the item's sequence, given by the caller, so "after item
/// X" is "rowid greater than X" and finding an item is a primary-key
/// lookup: no index of client ids to update on every insert. The table is
/// `AUTOINCREMENT` only for `sqlite_sequence`, which remembers the highest
/// sequence ever inserted (`lastSequence()`) after the items are gone. The
/// index on `account_id` (whose entries SQLite orders by rowid within an
/// account) serves unfiltered pages and the cascade; the one on
/// `(account_id, peer)` serves `with` filters, also in rowid order.
public final class SQLiteArchiveStore: ArchiveStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func append(_ items: [ArchiveItem], for username: String) throws -> Int {
        guard let accountID = try database.accountID(of: username) else {
            throw UnknownAccountError(username: username)
        }
        return try database.withCachedStatement(
            """
            INSERT INTO archive_messages (id, account_id, timestamp, peer, peer_resource, stanza)
            VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
            """
        ) { statement in
            var added = 0
            for item in items {
                precondition(item.sequence > 0, "archive sequences start at 1")
                // One call per column, with no `DatabaseValue` in between:
                // this runs for every archived copy of every message.
                try statement.bind(integer: item.sequence, at: 1)
                try statement.bind(integer: accountID, at: 2)
                try statement.bind(integer: Int64(item.timestamp), at: 3)
                try statement.bind(text: item.peer.bare, at: 4)
                try statement.bind(text: item.peer.resource, at: 5)
                try statement.bind(text: item.stanza, at: 6)
                try statement.run()
                statement.reset()
                added += database.changes
            }
            return added
        }
    }

    public func lastSequence() throws -> Int64 {
        try database.withCachedStatement("SELECT seq FROM sqlite_sequence WHERE name = 'archive_messages'") {
            statement in
            try statement.step() ? statement.int64(at: 0) : 0
        }
    }

    public func query(_ query: ArchiveQuery, for username: String) throws -> ArchivePage {
        guard let accountID = try database.accountID(of: username) else {
            // No account, no items: every item the query names is unknown.
            let named = [query.after, query.before].compactMap { $0 } + (query.items ?? [])
            if let item = named.first ?? query.position.item { throw ArchiveItemNotFound(sequence: item) }
            return ArchivePage(items: [], count: 0, complete: true)
        }
        var filter = SQLFilter("account_id = ?", accountID)
        if let with = query.with {
            filter.add("peer = ?", with.bare)
            if let resource = with.resource { filter.add("peer_resource = ?", resource) }
        }
        if let start = query.start { filter.add("timestamp >= ?", start) }
        if let end = query.end { filter.add("timestamp <= ?", end) }
        if let item = query.after { filter.add("id > ?", try check(item, accountID: accountID)) }
        if let item = query.before { filter.add("id < ?", try check(item, accountID: accountID)) }
        if let items = query.items {
            let checked = try items.map { try check($0, accountID: accountID) }
            filter.add("id IN (SELECT value FROM json_each(?))", "[" + checked.map(String.init).joined(separator: ",") + "]")
        }
        let count = try filter.select("count(*)", suffix: "", in: database) { statement in
            _ = try statement.step()
            return statement.int(at: 0)
        }
        var page = filter
        switch query.position {
        case .first, .last: break
        case .after(let item): page.add("id > ?", try check(item, accountID: accountID))
        case .before(let item): page.add("id < ?", try check(item, accountID: accountID))
        }
        // One row more than the page holds tells whether it is complete.
        let order = query.position.isBackward ? "DESC" : "ASC"
        let limit = query.max == Int.max ? Int.max : query.max + 1
        page.values.append(limit)
        return try page.select(
            "id, timestamp, peer, peer_resource, stanza", suffix: " ORDER BY id \(order) LIMIT ?",
            in: database
        ) { statement in
            var builder = ArchivePageBuilder(query)
            var exhausted = true
            while try statement.step() {
                guard builder.add(try Self.item(from: statement)) else {
                    exhausted = false
                    break
                }
            }
            return builder.finish(count: count, exhausted: exhausted)
        }
    }

    public func bounds(for username: String) throws -> (oldest: ArchiveItem, newest: ArchiveItem)? {
        guard let accountID = try database.accountID(of: username) else { return nil }
        func edge(_ order: String) throws -> ArchiveItem? {
            try database.withCachedStatement(
                """
                SELECT id, timestamp, peer, peer_resource, stanza FROM archive_messages
                WHERE account_id = ? ORDER BY id \(order) LIMIT 1
                """
            ) { statement in
                try statement.bind(accountID)
                return try statement.step() ? try Self.item(from: statement) : nil
            }
        }
        guard let oldest = try edge("ASC"), let newest = try edge("DESC") else { return nil }
        return (oldest, newest)
    }

    public func count(for username: String) throws -> Int {
        guard let accountID = try database.accountID(of: username) else { return 0 }
        return try database.withCachedStatement("SELECT count(*) FROM archive_messages WHERE account_id = ?") {
            statement in
            try statement.bind(accountID)
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    public func removeItems(before timestamp: Int, limit: Int) throws -> Int {
        // Walks the rowid order from the oldest item: this reads only the
        // items about to go, plus one.
        let firstKept = try database.withCachedStatement(
            "SELECT id FROM archive_messages WHERE timestamp >= ? ORDER BY id LIMIT 1"
        ) { statement in
            try statement.bind(timestamp)
            return try statement.step() ? statement.int64(at: 0) : Int64.max
        }
        try database.withCachedStatement(
            "DELETE FROM archive_messages WHERE id IN (SELECT id FROM archive_messages WHERE id < ? ORDER BY id LIMIT ?)"
        ) { statement in
            try statement.bind(firstKept, limit)
            try statement.run()
        }
        return database.changes
    }

    public func preferences(of username: String) throws -> ArchivePreferences? {
        let sql = """
            SELECT a.username, p.default_rule, p.always_jids, p.never_jids
            FROM archive_preferences AS p JOIN accounts AS a ON a.id = p.account_id WHERE a.username = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            return try statement.step() ? try Self.preferences(from: statement).1 : nil
        }
    }

    public func setPreferences(_ preferences: ArchivePreferences, of username: String) throws {
        guard let accountID = try database.accountID(of: username) else {
            throw UnknownAccountError(username: username)
        }
        try database.withCachedStatement(
            """
            INSERT INTO archive_preferences (account_id, default_rule, always_jids, never_jids)
            VALUES (?, ?, ?, ?)
            ON CONFLICT (account_id) DO UPDATE SET
                default_rule = excluded.default_rule, always_jids = excluded.always_jids,
                never_jids = excluded.never_jids
            """
        ) { statement in
            try statement.bind(
                accountID, preferences.defaultRule.rawValue, try Self.encode(preferences.always),
                try Self.encode(preferences.never))
            try statement.run()
        }
    }

    public func allPreferences() throws -> [String: ArchivePreferences] {
        try database.withCachedStatement(
            """
            SELECT a.username, p.default_rule, p.always_jids, p.never_jids
            FROM archive_preferences AS p JOIN accounts AS a ON a.id = p.account_id
            """
        ) { statement in
            var all: [String: ArchivePreferences] = [:]
            while try statement.step() {
                let (username, preferences) = try Self.preferences(from: statement)
                all[username] = preferences
            }
            return all
        }
    }

    // MARK: - Rows

    /// `item`, once checked to be in the account's archive.
    ///
    /// - Throws: `ArchiveItemNotFound` when it is not.
    private func check(_ item: Int64, accountID: Int64) throws -> Int64 {
        try database.withCachedStatement("SELECT 1 FROM archive_messages WHERE id = ? AND account_id = ?") {
            statement in
            try statement.bind(item, accountID)
            guard try statement.step() else { throw ArchiveItemNotFound(sequence: item) }
            return item
        }
    }

    /// The item in columns `id, timestamp, peer, peer_resource, stanza`.
    private static func item(from statement: Statement) throws -> ArchiveItem {
        guard let peer = statement.string(at: 2), let stanza = statement.string(at: 4) else {
            throw DatabaseError(resultCode: .corrupt, message: "damaged archive record", sql: statement.sql)
        }
        return ArchiveItem(
            sequence: statement.int64(at: 0), timestamp: statement.int(at: 1),
            peer: ArchivePeer(bare: peer, resource: statement.string(at: 3)), stanza: stanza)
    }

    /// The username and preferences in columns `username, default_rule,
    /// always_jids, never_jids`.
    private static func preferences(from statement: Statement) throws -> (String, ArchivePreferences) {
        let decoder = JSONDecoder()
        guard let username = statement.string(at: 0),
            let rule = statement.string(at: 1).flatMap(ArchivePreferences.Default.init(rawValue:)),
            let always = try? decoder.decode([String].self, from: Data((statement.string(at: 2) ?? "").utf8)),
            let never = try? decoder.decode([String].self, from: Data((statement.string(at: 3) ?? "").utf8))
        else {
            throw DatabaseError(resultCode: .corrupt, message: "damaged archive preferences", sql: statement.sql)
        }
        return (username, ArchivePreferences(defaultRule: rule, always: always, never: never))
    }

    private static func encode(_ jids: [String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: try encoder.encode(jids), as: UTF8.self)
    }
}

/// A `WHERE` clause over `archive_messages` built from optional filters,
/// with its values in parameter order. The SQL varies with the filters, so
/// its statements are prepared per query rather than cached.
private struct SQLFilter {
    var clauses: [String]
    var values: [(any DatabaseValueConvertible)?]

    init(_ clause: String, _ value: any DatabaseValueConvertible) {
        clauses = [clause]
        values = [value]
    }

    mutating func add(_ clause: String, _ value: any DatabaseValueConvertible) {
        clauses.append(clause)
        values.append(value)
    }

    /// Runs `SELECT columns FROM archive_messages WHERE … suffix` and hands
    /// the statement to `body`.
    func select<Result>(
        _ columns: String, suffix: String, in database: Database, _ body: (Statement) throws -> Result
    ) throws -> Result {
        let statement = try database.prepare(
            "SELECT \(columns) FROM archive_messages WHERE \(clauses.joined(separator: " AND "))\(suffix)")
        for (offset, value) in values.enumerated() {
            try statement.bind(value, at: offset + 1)
        }
        return try body(statement)
    }
}
