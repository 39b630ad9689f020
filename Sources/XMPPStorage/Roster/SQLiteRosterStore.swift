import Foundation
import SQLiteKit
import XMPPCore

/// A `RosterStore` in the tables `roster_items` and `roster_versions`
/// (migration `0002-roster`).
///
/// One row per entry, keyed by `(account_id, contact)`, so a lookup and the
/// sorted listing of one roster both walk the primary key. The groups of an
/// entry are one JSON array of strings in `group_names`, not a child table:
/// the server reads and writes an entry's groups only together with the
/// entry, never looks entries up by group, and keeps their order, so one
/// column makes a put a single-row upsert and a read a single-table scan.
/// SQLite's JSON functions can still query them from the shell.
///
/// The version lives in `roster_versions`; a missing row means version 0.
public final class SQLiteRosterStore: RosterStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    private static let columns = """
        r.contact, r.name, r.group_names, r.subscription, r.pending_out, r.pending_in,
        r.pre_approved, r.in_roster, r.pending_in_request
        """

    public func items(of username: String) throws -> [RosterItem] {
        let sql = """
            SELECT \(Self.columns)
            FROM roster_items AS r JOIN accounts AS a ON a.id = r.account_id
            WHERE a.username = ? ORDER BY r.contact
            """
        // The default BINARY collation orders contacts by their UTF-8 bytes.
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            var items: [RosterItem] = []
            while try statement.step() {
                items.append(try Self.item(from: statement))
            }
            return items
        }
    }

    public func item(_ contact: String, of username: String) throws -> RosterItem? {
        let sql = """
            SELECT \(Self.columns)
            FROM roster_items AS r JOIN accounts AS a ON a.id = r.account_id
            WHERE a.username = ? AND r.contact = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username, contact)
            return try statement.step() ? try Self.item(from: statement) : nil
        }
    }

    public func put(_ item: RosterItem, of username: String) throws -> Int {
        let sql = """
            INSERT INTO roster_items
                (account_id, contact, name, group_names, subscription, pending_out, pending_in,
                 pre_approved, in_roster, pending_in_request)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (account_id, contact) DO UPDATE SET
                name = excluded.name, group_names = excluded.group_names,
                subscription = excluded.subscription, pending_out = excluded.pending_out,
                pending_in = excluded.pending_in, pre_approved = excluded.pre_approved,
                in_roster = excluded.in_roster, pending_in_request = excluded.pending_in_request
            """
        let groups = try JSONText.array(item.groups)
        return try database.transaction {
            guard let accountID = try database.accountID(of: username) else {
                throw UnknownAccountError(username: username)
            }
            try database.withCachedStatement(sql) { statement in
                let state = item.state
                try statement.bind(
                    accountID, item.contact, item.name, groups, state.subscription.rawValue,
                    Self.integer(state.pendingOut), Self.integer(state.pendingIn),
                    Self.integer(state.preApproved), Self.integer(item.inRoster),
                    item.pendingInRequest)
                try statement.run()
            }
            return try bumpVersion(accountID: accountID)
        }
    }

    public func remove(_ contact: String, of username: String) throws -> Int? {
        try database.transaction {
            guard let accountID = try database.accountID(of: username) else { return nil }
            try database.withCachedStatement(
                "DELETE FROM roster_items WHERE account_id = ? AND contact = ?"
            ) { statement in
                try statement.bind(accountID, contact)
                try statement.run()
            }
            guard database.changes > 0 else { return nil }
            return try bumpVersion(accountID: accountID)
        }
    }

    public func version(of username: String) throws -> Int {
        let sql = """
            SELECT v.version
            FROM roster_versions AS v JOIN accounts AS a ON a.id = v.account_id
            WHERE a.username = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            return try statement.step() ? statement.int(at: 0) : 0
        }
    }

    /// Scans all rosters (there is no index on `contact`: deleting an
    /// account is rare, and an index would cost every roster write).
    public func removeEverywhere(_ contact: String) throws -> [RemovedRosterEntry] {
        let sql = """
            SELECT a.username, \(Self.columns)
            FROM roster_items AS r JOIN accounts AS a ON a.id = r.account_id
            WHERE r.contact = ? ORDER BY a.username
            """
        return try database.transaction {
            let found = try database.withCachedStatement(sql) { statement in
                try statement.bind(contact)
                var found: [(owner: String, item: RosterItem)] = []
                while try statement.step() {
                    found.append((statement.string(at: 0) ?? "", try Self.item(from: statement, firstColumn: 1)))
                }
                return found
            }
            return try found.compactMap { entry in
                try remove(contact, of: entry.owner).map {
                    RemovedRosterEntry(owner: entry.owner, item: entry.item, version: $0)
                }
            }
        }
    }

    // MARK: Rows

    /// Adds one to the account's version, creating the row at 1; must run
    /// in the transaction of the change it counts.
    private func bumpVersion(accountID: Int64) throws -> Int {
        let sql = """
            INSERT INTO roster_versions (account_id, version) VALUES (?, 1)
            ON CONFLICT (account_id) DO UPDATE SET version = version + 1
            RETURNING version
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(accountID)
            // The upsert makes the change and returns its row on the first step.
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    private static func integer(_ flag: Bool) -> Int {
        flag ? 1 : 0
    }

    /// Reads an entry from a row of `columns`.
    ///
    /// - Throws: `DatabaseError` with `.corrupt` for a value the schema's
    ///   checks should have kept out.
    private static func item(from statement: Statement, firstColumn first: Int = 0) throws -> RosterItem {
        guard
            let contact = statement.string(at: first),
            let subscription = statement.string(at: first + 3).flatMap(
                SubscriptionState.Subscription.init(rawValue:))
        else {
            throw DatabaseError(
                resultCode: .corrupt, message: "damaged roster record", sql: statement.sql)
        }
        return RosterItem(
            contact: contact, name: statement.string(at: first + 1),
            groups: try decodeGroups(statement.string(at: first + 2), sql: statement.sql),
            state: SubscriptionState(
                subscription, pendingOut: statement.int(at: first + 4) != 0,
                pendingIn: statement.int(at: first + 5) != 0, preApproved: statement.int(at: first + 6) != 0),
            inRoster: statement.int(at: first + 7) != 0, pendingInRequest: statement.string(at: first + 8))
    }

    private static func decodeGroups(_ json: String?, sql: String) throws -> [String] {
        guard let json, let groups = try? JSONDecoder().decode([String].self, from: Data(json.utf8))
        else {
            throw DatabaseError(resultCode: .corrupt, message: "damaged roster groups", sql: sql)
        }
        return groups
    }
}
