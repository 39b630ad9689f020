import SQLiteKit
import Testing
import XMPPCore

@testable import XMPPStorage

/// What only the SQLite roster and offline stores can show: their rows,
/// the schema's checks, index use and commits.
@Suite struct SQLiteRosterAndOfflineStoreTests {
    private func count(_ table: String, in database: Database) throws -> Int {
        let statement = try database.prepare("SELECT count(*) FROM \(table)")
        _ = try statement.step()
        return statement.int(at: 0)
    }

    private func storesWithRomeo() throws -> (Database, Stores) {
        let database = try migratedInMemoryDatabase()
        let stores = Stores(database: database)
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        return (database, stores)
    }

    @Test func deletingAnAccountCascadesToItsRows() throws {
        let (database, stores) = try storesWithRomeo()
        #expect(try stores.accounts.createAccount("juliet", credentials: sampleCredentialPair()))
        for username in ["romeo", "juliet"] {
            _ = try stores.roster.put(RosterItem(contact: "a@x", groups: ["g"]), of: username)
            _ = try stores.roster.put(RosterItem(contact: "b@x"), of: username)
            #expect(
                try stores.offline.store("<m/>", from: "a@x", timestamp: 1, for: username, quota: OfflineQuota(messages: 9))
            )
        }
        #expect(try count("roster_items", in: database) == 4)
        #expect(try count("roster_versions", in: database) == 2)
        #expect(try count("offline_messages", in: database) == 2)

        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try count("roster_items", in: database) == 2)
        #expect(try count("roster_versions", in: database) == 1)
        #expect(try count("offline_messages", in: database) == 1)
    }

    @Test(arguments: [
        "UPDATE roster_items SET subscription = 'maybe'",
        "UPDATE roster_items SET pending_out = 2",
        "UPDATE roster_items SET pending_in = -1",
        "UPDATE roster_items SET pre_approved = 'yes'",
        "UPDATE roster_items SET in_roster = 3",
        "UPDATE roster_items SET group_names = '{\"a\": 1}'",
        "UPDATE roster_items SET group_names = 'not json'",
        "UPDATE roster_versions SET version = 0",
    ])
    func theSchemaRefusesValuesNoEntryHas(update: String) throws {
        let (database, stores) = try storesWithRomeo()
        _ = try stores.roster.put(RosterItem(contact: "juliet@capulet.lit"), of: "romeo")
        let error = try #require(throws: DatabaseError.self) { try database.execute(update) }
        #expect(error.resultCode == .constraintCheck)
    }

    @Test(arguments: [
        "UPDATE roster_items SET group_names = '[1]'",
        "UPDATE roster_items SET group_names = '[\"ok\", null]'",
    ])
    func aDamagedEntryIsReportedAsCorrupt(update: String) throws {
        let (database, stores) = try storesWithRomeo()
        _ = try stores.roster.put(RosterItem(contact: "juliet@capulet.lit"), of: "romeo")
        try database.execute(update)
        let error = try #require(throws: DatabaseError.self) {
            _ = try stores.roster.items(of: "romeo")
        }
        #expect(error.resultCode == .corrupt)
    }

    @Test func groupsAreOneJSONArrayInTheirOrder() throws {
        let (database, stores) = try storesWithRomeo()
        _ = try stores.roster.put(
            RosterItem(contact: "juliet@capulet.lit", groups: ["b/c", "\"q\"", "Семья"]),
            of: "romeo")
        let statement = try database.prepare(
            "SELECT value FROM roster_items, json_each(roster_items.group_names) ORDER BY key")
        var groups: [String] = []
        while try statement.step() { groups.append(statement.string(at: 0) ?? "") }
        #expect(groups == ["b/c", "\"q\"", "Семья"], "SQLite's JSON functions read them too")
    }

    @Test(arguments: [
        "SELECT id FROM offline_messages WHERE account_id = 1 ORDER BY id",
        "DELETE FROM offline_messages WHERE account_id = 1",
    ])
    func offlineLookupsUseTheAccountIndex(query: String) throws {
        let database = try migratedInMemoryDatabase()
        let plan = try database.prepare("EXPLAIN QUERY PLAN " + query)
        var details: [String] = []
        while try plan.step() { details.append(plan.string(at: 3) ?? "") }
        #expect(details.contains { $0.contains("offline_messages_by_account") }, "\(details)")
        #expect(!details.contains { $0.contains("TEMP B-TREE") }, "no sorting step: \(details)")
    }

    /// Each account's `offline_usage` row next to what counting its
    /// messages gives; accounts without a row count as (0, 0).
    private func usageAndCount(in database: Database) throws -> [String: [Int]] {
        let statement = try database.prepare(
            """
            SELECT a.username, coalesce(u.messages, 0), coalesce(u.bytes, 0),
                (SELECT count(*) FROM offline_messages AS m WHERE m.account_id = a.id),
                (SELECT coalesce(sum(length(CAST(m.stanza AS BLOB))), 0) FROM offline_messages AS m
                    WHERE m.account_id = a.id)
            FROM accounts AS a LEFT JOIN offline_usage AS u ON u.account_id = a.id
            """)
        var rows: [String: [Int]] = [:]
        while try statement.step() {
            rows[statement.string(at: 0) ?? ""] = (1...4).map { statement.int(at: $0) }
        }
        return rows
    }

    @Test func theUsageRowFollowsStoresRemovalsRollbacksAndDeletedAccounts() throws {
        let (database, stores) = try storesWithRomeo()
        #expect(try stores.accounts.createAccount("juliet", credentials: sampleCredentialPair()))
        let quota = OfflineQuota(messages: 3)
        for (index, username) in ["romeo", "romeo", "romeo", "juliet"].enumerated() {
            #expect(try stores.offline.store("<m>\(index)🌹</m>", from: "a@x", timestamp: index, for: username, quota: quota))
        }
        #expect(try usageAndCount(in: database) == ["romeo": [3, 36, 3, 36], "juliet": [1, 12, 1, 12]])

        #expect(try !stores.offline.store("<m/>", from: "a@x", timestamp: 9, for: "romeo", quota: quota), "at the limit")
        #expect(throws: PlannedError.self) {
            try database.transaction {
                _ = try stores.offline.store("<m/>", from: "a@x", timestamp: 9, for: "juliet", quota: quota)
                throw PlannedError()
            }
        }
        #expect(try usageAndCount(in: database) == ["romeo": [3, 36, 3, 36], "juliet": [1, 12, 1, 12]])

        let romeos = try stores.offline.messages(for: "romeo").map(\.id)
        #expect(try stores.offline.remove([romeos[0], romeos[2]], for: "romeo") == 2)
        #expect(try usageAndCount(in: database) == ["romeo": [1, 12, 1, 12], "juliet": [1, 12, 1, 12]])
        #expect(try stores.offline.store("<m/>", from: "a@x", timestamp: 9, for: "romeo", quota: quota), "room again")

        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try count("offline_usage", in: database) == 1, "the deleted account's row went with it")
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        #expect(try usageAndCount(in: database) == ["romeo": [0, 0, 0, 0], "juliet": [1, 12, 1, 12]])
        #expect(try stores.offline.count(for: "romeo") == 0)
    }

    @Test func theQuotaCheckReadsTheUsageRowNotTheMessages() throws {
        let (database, stores) = try storesWithRomeo()
        #expect(try stores.offline.store("<m/>", from: "a@x", timestamp: 0, for: "romeo", quota: OfflineQuota(messages: 9)))
        // A usage row that disagrees with the messages shows which one is read.
        try database.execute("UPDATE offline_usage SET messages = 9")
        #expect(try !stores.offline.store("<m/>", from: "a@x", timestamp: 1, for: "romeo", quota: OfflineQuota(messages: 9)))
        #expect(try stores.offline.count(for: "romeo") == 9)
    }

    @Test func aStoredMessageIsCommittedBeforeStoreReturns() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/offline.sqlite"
            let database = try Database(path: path)
            try Storage.migrator.migrate(database)
            let stores = Stores(database: database)
            #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
            #expect(
                try stores.offline.store("<m/>", from: "a@x", timestamp: 1, for: "romeo", quota: OfflineQuota(messages: 9)))
            #expect(!database.isInTransaction)

            let other = try Database(path: path)
            #expect(try count("offline_messages", in: other) == 1, "another connection sees it")
        }
    }

    @Test func aJobCanGroupStoresInOneTransaction() throws {
        let (database, stores) = try storesWithRomeo()
        #expect(throws: PlannedError.self) {
            try database.transaction {
                #expect(
                    try stores.offline.store(
                        "<m/>", from: "a@x", timestamp: 1, for: "romeo", quota: OfflineQuota(messages: 9)))
                _ = try stores.roster.put(RosterItem(contact: "a@x"), of: "romeo")
                throw PlannedError()
            }
        }
        #expect(try stores.offline.count(for: "romeo") == 0)
        #expect(
            try stores.roster.version(of: "romeo") == 0, "the version rolled back with the item")
    }
}
