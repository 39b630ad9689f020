import Foundation
import SQLiteKit

/// An `ArchiveStore` in the tables `archive_stanzas`, `archive_items`,
/// `archive_state` and `archive_preferences` (migrations `0007-archive` and
/// `0009-archive-messages-once`).
///
/// Built for cheap writes, since every routed message is archived on the
/// routing path's heels: a message's stanza is stored once in
/// `archive_stanzas` (its rowid is the sequence of its first copy, so the
/// table grows at its end), and each archive's copy is a small row of
/// `archive_items`, clustered by `(account_id, id)` with `id` the copy's
/// sequence. That one key serves unfiltered pages in either direction,
/// finding an item, counts and the cascade; there is no other index to
/// update per copy. A `with` filter reads the user's own item rows in
/// order (a few dozen bytes each, on adjacent pages) and compares the peer.
/// A trigger counts a stanza's copies down as items go and deletes it with
/// its last one. `archive_state` keeps the highest sequence ever added
/// (`lastSequence()`), which outlives the items.
public final class SQLiteArchiveStore: ArchiveStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func append(_ messages: [ArchivedMessage]) throws -> Int {
        var accountIDs: [String: Int64?] = [:]
        var added = 0
        var highest: Int64 = 0
        try database.withCachedStatement(
            """
            INSERT INTO archive_items (account_id, id, timestamp, peer, peer_resource, stanza_id)
            VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, id) DO NOTHING
            """
        ) { item in
            for message in messages {
                guard let stanzaID = message.copies.map(\.sequence).min() else { continue }
                var kept = 0
                for copy in message.copies {
                    precondition(copy.sequence > 0, "archive sequences start at 1")
                    let accountID: Int64?
                    if let known = accountIDs[copy.owner] {
                        accountID = known
                    } else {
                        accountID = try database.accountID(of: copy.owner)
                        accountIDs[copy.owner] = accountID
                    }
                    guard let accountID else { continue }
                    // One call per column, with no `DatabaseValue` in
                    // between: this runs for every archived copy.
                    try item.bind(integer: accountID, at: 1)
                    try item.bind(integer: copy.sequence, at: 2)
                    try item.bind(integer: Int64(message.timestamp), at: 3)
                    try item.bind(text: copy.peer.bare, at: 4)
                    try item.bind(text: copy.peer.resource, at: 5)
                    try item.bind(integer: stanzaID, at: 6)
                    try item.run()
                    item.reset()
                    if database.changes > 0 {
                        kept += 1
                        highest = max(highest, copy.sequence)
                    }
                }
                if kept > 0 { try storeStanza(of: message, id: stanzaID, copies: kept) }
                added += kept
            }
        }
        if highest > 0 {
            try database.withCachedStatement(
                "UPDATE archive_state SET last_sequence = max(last_sequence, ?) WHERE id = 1"
            ) { statement in
                try statement.bind(integer: highest, at: 1)
                try statement.run()
            }
        }
        return added
    }

    /// Inserts a message's stanza for `copies` new items, or counts them
    /// in if an earlier call stored it.
    private func storeStanza(of message: ArchivedMessage, id: Int64, copies: Int) throws {
        try database.withCachedStatement(
            """
            INSERT INTO archive_stanzas (id, timestamp, stanza, copies) VALUES (?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET copies = copies + excluded.copies
            """
        ) { statement in
            try statement.bind(integer: id, at: 1)
            try statement.bind(integer: Int64(message.timestamp), at: 2)
            try statement.bind(text: message.stanza, at: 3)
            try statement.bind(integer: Int64(copies), at: 4)
            try statement.run()
        }
    }

    public func lastSequence() throws -> Int64 {
        try database.withCachedStatement("SELECT last_sequence FROM archive_state WHERE id = 1") { statement in
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
        var filter = SQLFilter("i.account_id = ?", accountID)
        if let with = query.with {
            filter.add("i.peer = ?", with.bare)
            if let resource = with.resource { filter.add("i.peer_resource = ?", resource) }
        }
        return try filter.page(
            query, counting: "archive_items AS i", reading: Self.itemColumns, from: Self.itemsWithStanzas, in: database,
            contains: { try self.contains($0, accountID: accountID) }, item: Self.item(from:))
    }

    public func bounds(for username: String) throws -> (oldest: ArchiveItem, newest: ArchiveItem)? {
        guard let accountID = try database.accountID(of: username) else { return nil }
        func edge(_ order: String) throws -> ArchiveItem? {
            try database.withCachedStatement(
                """
                SELECT \(Self.itemColumns) FROM \(Self.itemsWithStanzas)
                WHERE i.account_id = ? ORDER BY i.id \(order) LIMIT 1
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
        return try database.withCachedStatement("SELECT count(*) FROM archive_items WHERE account_id = ?") {
            statement in
            try statement.bind(accountID)
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    public func totalCount() throws -> Int {
        try database.withCachedStatement("SELECT count(*) FROM archive_items") { statement in
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    public func removeMessages(before timestamp: Int, limit: Int) throws -> Int {
        // Messages in archive order are the stanzas in rowid order.
        let firstKept = try database.firstArchiveID(in: "archive_stanzas", stampedFrom: timestamp)
        let (boundary, doomed) = try database.withCachedStatement(
            "SELECT id FROM archive_stanzas WHERE id < ? ORDER BY id LIMIT ?"
        ) { statement in
            try statement.bind(firstKept, limit + 1)
            var (count, next) = (0, firstKept)
            while try statement.step() {
                guard count < limit else {
                    next = statement.int64(at: 0)
                    break
                }
                count += 1
            }
            return (next, count)
        }
        guard doomed > 0 else { return 0 }
        // A copy's sequence is below the next message's first one, so the
        // doomed copies are each archive's items below `boundary`; the
        // trigger deletes their stanzas with the last of them.
        try database.withCachedStatement(
            "DELETE FROM archive_items WHERE account_id IN (SELECT id FROM accounts) AND id < ?"
        ) { statement in
            try statement.bind(boundary)
            try statement.run()
        }
        return doomed
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

    /// Whether `item` is in the account's archive.
    private func contains(_ item: Int64, accountID: Int64) throws -> Bool {
        try database.withCachedStatement("SELECT 1 FROM archive_items WHERE account_id = ? AND id = ?") {
            statement in
            try statement.bind(accountID, item)
            return try statement.step()
        }
    }

    /// An item's columns in `itemsWithStanzas`, in the order `item(from:)`
    /// reads them.
    private static let itemColumns = "i.id, i.timestamp, i.peer, i.peer_resource, s.stanza"

    /// The items joined to their stanzas.
    private static let itemsWithStanzas = "archive_items AS i JOIN archive_stanzas AS s ON s.id = i.stanza_id"

    /// The item in the columns `itemColumns`.
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
