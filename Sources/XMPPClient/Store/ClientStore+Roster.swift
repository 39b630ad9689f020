import Foundation
import SQLiteKit
import XMPPCore

/// The roster cache: the last roster the server sent and its version, so
/// that a login can ask only for what changed since (RFC 6121 §2.6).
///
/// One row per contact in `roster_contacts`; an entry's groups are one JSON
/// array of strings, as in the server's store, since they are only ever
/// read and written with their entry. The version is in `roster_versions`;
/// no row means no version.
extension ClientStore {
    /// The cached roster of `account`, contacts sorted by JID (as `JID`'s
    /// `<` orders them), with the version the server gave it.
    ///
    /// - Returns: No version and no contacts when nothing is cached.
    /// - Throws: `DatabaseError`.
    public func cachedRoster(account: JID) async throws -> (version: String?, contacts: [RosterContact]) {
        try await queue.perform { try $0.cachedRoster(account: account) }
    }

    /// Replaces the cached roster of `account` with a full roster from the
    /// server (RFC 6121 §2.1.4), in one transaction.
    ///
    /// - Parameters:
    ///   - version: The result's `ver`, or `nil` when the server gave none.
    ///   - contacts: The contacts; of two with the same JID the last wins.
    /// - Throws: `DatabaseError`; then the old roster is kept.
    public func replaceRoster(account: JID, version: String?, contacts: [RosterContact]) async throws {
        try await queue.perform { try $0.replaceRoster(account: account, version: version, contacts: contacts) }
    }

    /// Applies one roster push (RFC 6121 §2.1.6) to the cached roster of
    /// `account` and records its version, in one transaction.
    ///
    /// - Parameters:
    ///   - version: The push's `ver`. `nil` (a server without roster
    ///     versioning) forgets the cached version, so that the next login
    ///     asks for the whole roster.
    ///   - change: The contact to add or update, or the JID to remove;
    ///     removing a JID not in the cache changes only the version.
    /// - Throws: `DatabaseError`; then nothing changes.
    public func applyRosterPush(account: JID, version: String?, change: RosterChange) async throws {
        try await queue.perform { try $0.applyRosterPush(account: account, version: version, change: change) }
    }
}

/// The roster cache's tables and SQL.
extension ClientStore.Tables {
    /// Creates the roster cache's tables (migration `0003-roster`).
    static func createRosterCache(_ database: Database) throws {
        try database.execute(
            """
            CREATE TABLE roster_contacts (
                account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                jid TEXT NOT NULL,
                name TEXT,
                group_names TEXT NOT NULL
                    CHECK (json_valid(group_names) AND json_type(group_names) = 'array'),
                subscription TEXT NOT NULL
                    CHECK (subscription IN ('none', 'to', 'from', 'both')),
                pending_out INTEGER NOT NULL CHECK (pending_out IN (0, 1)),
                PRIMARY KEY (account_id, jid)
            ) WITHOUT ROWID;
            CREATE TABLE roster_versions (
                account_id INTEGER PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
                version TEXT NOT NULL
            );
            """)
    }

    /// `ClientStore.cachedRoster(account:)`'s SQL, on the store's thread.
    func cachedRoster(account: JID) throws -> (version: String?, contacts: [RosterContact]) {
        guard let accountID = try accountID(of: account) else { return (nil, []) }
        let version = try database.withCachedStatement(
            "SELECT version FROM roster_versions WHERE account_id = ?"
        ) { statement in
            try statement.bind(accountID)
            return try statement.step() ? statement.string(at: 0) : nil
        }
        let contacts = try database.withCachedStatement(
            """
            SELECT jid, name, group_names, subscription, pending_out
            FROM roster_contacts WHERE account_id = ?
            """
        ) { statement in
            try statement.bind(accountID)
            var contacts: [RosterContact] = []
            while try statement.step() {
                contacts.append(try Self.contact(from: statement))
            }
            return contacts
        }
        return (version, contacts.sorted { $0.jid < $1.jid })
    }

    /// `ClientStore.replaceRoster(account:version:contacts:)`'s SQL, on the store's thread.
    func replaceRoster(account: JID, version: String?, contacts: [RosterContact]) throws {
        try database.transaction {
            let accountID = try createAccountID(of: account)
            try run("DELETE FROM roster_contacts WHERE account_id = ?", accountID)
            for contact in contacts {
                try put(contact, accountID: accountID)
            }
            try setRosterVersion(version, accountID: accountID)
        }
    }

    /// `ClientStore.applyRosterPush(account:version:change:)`'s SQL, on the store's thread.
    func applyRosterPush(account: JID, version: String?, change: RosterChange) throws {
        try database.transaction {
            let accountID = try createAccountID(of: account)
            switch change {
            case .update(let contact):
                try put(contact, accountID: accountID)
            case .remove(let jid):
                try run(
                    "DELETE FROM roster_contacts WHERE account_id = ? AND jid = ?",
                    accountID, jid.bare.description)
            }
            try setRosterVersion(version, accountID: accountID)
        }
    }

    // MARK: Rows

    /// Inserts `contact`, or replaces the entry with its JID.
    private func put(_ contact: RosterContact, accountID: Int64) throws {
        let groups = String(decoding: try JSONEncoder().encode(contact.groups), as: UTF8.self)
        try run(
            """
            INSERT INTO roster_contacts
                (account_id, jid, name, group_names, subscription, pending_out)
            VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (account_id, jid) DO UPDATE SET
                name = excluded.name, group_names = excluded.group_names,
                subscription = excluded.subscription, pending_out = excluded.pending_out
            """,
            accountID, contact.jid.description, contact.name, groups,
            contact.subscription.rawValue, Self.integer(contact.isPendingOut))
    }

    /// Records `version`, or forgets the version for `nil`.
    private func setRosterVersion(_ version: String?, accountID: Int64) throws {
        guard let version else {
            try run("DELETE FROM roster_versions WHERE account_id = ?", accountID)
            return
        }
        try run(
            """
            INSERT INTO roster_versions (account_id, version) VALUES (?, ?)
            ON CONFLICT (account_id) DO UPDATE SET version = excluded.version
            """,
            accountID, version)
    }

    /// Reads a contact from the current row.
    ///
    /// - Throws: `DatabaseError` with `.corrupt` for a value the schema's
    ///   checks should have kept out.
    private static func contact(from statement: Statement) throws -> RosterContact {
        guard
            let subscription = statement.string(at: 3).flatMap(
                SubscriptionState.Subscription.init(rawValue:)),
            let groups = try? JSONDecoder().decode(
                [String].self, from: Data((statement.string(at: 2) ?? "").utf8))
        else {
            throw DatabaseError(
                resultCode: .corrupt, message: "damaged cached roster entry", sql: statement.sql)
        }
        return RosterContact(
            jid: try jid(at: 0, of: statement), name: statement.string(at: 1), groups: groups,
            subscription: subscription, isPendingOut: statement.int(at: 4) != 0)
    }
}
