import SQLiteKit
import Testing
import XMPPCore

@testable import XMPPStorage

/// What only the SQLite archive store can show: its rows, the schema's
/// checks and index use.
@Suite struct SQLiteArchiveStoreTests {
    private func count(_ table: String, in database: Database) throws -> Int {
        let statement = try database.prepare("SELECT count(*) FROM \(table)")
        _ = try statement.step()
        return statement.int(at: 0)
    }

    @Test func aMessageIsStoredOnceAndGoesWithItsLastCopy() throws {
        let database = try migratedInMemoryDatabase()
        let stores = Stores(database: database)
        for username in ["romeo", "juliet"] {
            #expect(try stores.accounts.createAccount(username, credentials: sampleCredentialPair()))
            try stores.archive.setPreferences(ArchivePreferences(defaultRule: .roster), of: username)
        }
        let copies = [
            ArchiveCopy(owner: "romeo", sequence: 1, peer: ArchivePeer(bare: "juliet@x")),
            ArchiveCopy(owner: "juliet", sequence: 2, peer: ArchivePeer(bare: "romeo@x")),
        ]
        #expect(try stores.archive.append([ArchivedMessage(timestamp: 1, stanza: "<m/>", copies: copies)]) == 2)
        #expect(try count("archive_stanzas", in: database) == 1)
        #expect(try count("archive_items", in: database) == 2)
        #expect(try count("archive_preferences", in: database) == 2)
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try count("archive_stanzas", in: database) == 1, "juliet's copy still needs it")
        #expect(try count("archive_items", in: database) == 1)
        #expect(try count("archive_preferences", in: database) == 1)
        #expect(try stores.accounts.deleteAccount("juliet"))
        #expect(try count("archive_stanzas", in: database) == 0)
        #expect(try count("archive_items", in: database) == 0)
    }

    @Test(arguments: [
        "UPDATE archive_preferences SET default_rule = 'sometimes'",
        "UPDATE archive_preferences SET always_jids = '{\"a\": 1}'",
        "UPDATE archive_preferences SET never_jids = 'not json'",
    ])
    func theSchemaRefusesPreferencesNoUserHas(update: String) throws {
        let database = try migratedInMemoryDatabase()
        let stores = Stores(database: database)
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        try stores.archive.setPreferences(ArchivePreferences(defaultRule: .always), of: "romeo")
        let error = try #require(throws: DatabaseError.self) { try database.execute(update) }
        #expect(error.resultCode == .constraintCheck)
    }

    @Test(arguments: [
        "SELECT i.id, s.stanza FROM archive_items AS i JOIN archive_stanzas AS s ON s.id = i.stanza_id"
            + " WHERE i.account_id = 1 AND i.id > 5 ORDER BY i.id LIMIT 51",
        "SELECT i.id, s.stanza FROM archive_items AS i JOIN archive_stanzas AS s ON s.id = i.stanza_id"
            + " WHERE i.account_id = 1 ORDER BY i.id DESC LIMIT 51",
        "SELECT i.id, s.stanza FROM archive_items AS i JOIN archive_stanzas AS s ON s.id = i.stanza_id"
            + " WHERE i.account_id = 1 AND i.peer = 'a@x' ORDER BY i.id LIMIT 51",
        "DELETE FROM archive_items WHERE account_id IN (SELECT id FROM accounts) AND id < 5",
    ])
    func queriesWalkOneArchiveInOrder(query: String) throws {
        let database = try migratedInMemoryDatabase()
        let plan = try database.prepare("EXPLAIN QUERY PLAN " + query)
        var details: [String] = []
        while try plan.step() { details.append(plan.string(at: 3) ?? "") }
        #expect(details.contains { $0.contains("USING PRIMARY KEY (account_id=?") }, "\(details)")
        #expect(!details.contains { $0.contains("TEMP B-TREE") }, "no sorting step: \(details)")
        #expect(!details.contains { $0.hasPrefix("SCAN") }, "no full scan: \(details)")
    }

    @Test func aBatchCanCommitWithoutWaitingForTheDisk() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(path: directory + "/archive.sqlite")
            try Storage.migrator.migrate(database)
            let stores = Stores(database: database)
            func synchronous() throws -> Int {
                let statement = try database.prepare("PRAGMA synchronous")
                _ = try statement.step()
                return statement.int(at: 0)
            }
            #expect(try synchronous() == 2, "FULL")
            #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
            let inside = try stores.inTransaction(durable: false) {
                _ = try stores.archive.append(
                    ArchiveItem(sequence: 1, timestamp: 1, peer: ArchivePeer(bare: "a@x"), stanza: "<m/>"), for: "romeo")
                return try synchronous()
            }
            #expect(inside == 1, "NORMAL")
            #expect(try synchronous() == 2, "restored")
            #expect(throws: PlannedError.self) {
                try stores.inTransaction(durable: false) { throw PlannedError() }
            }
            #expect(try synchronous() == 2, "restored after a rollback too")
            #expect(try stores.archive.count(for: "romeo") == 1)
        }
    }

    @Test func aDamagedPreferenceRowIsReportedAsCorrupt() throws {
        let database = try migratedInMemoryDatabase()
        let stores = Stores(database: database)
        #expect(try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair()))
        try stores.archive.setPreferences(ArchivePreferences(defaultRule: .always), of: "romeo")
        try database.execute("UPDATE archive_preferences SET always_jids = '[1]'")
        let error = try #require(throws: DatabaseError.self) { _ = try stores.archive.preferences(of: "romeo") }
        #expect(error.resultCode == .corrupt)
    }
}
