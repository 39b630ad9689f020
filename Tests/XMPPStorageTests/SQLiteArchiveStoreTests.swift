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

    @Test func deletingAnAccountCascadesToItsArchiveAndPreferences() throws {
        let database = try migratedInMemoryDatabase()
        let stores = Stores(database: database)
        for username in ["romeo", "juliet"] {
            #expect(try stores.accounts.createAccount(username, credentials: sampleCredentialPair()))
            #expect(try stores.archive.append(
                ArchiveItem(sequence: username == "romeo" ? 1 : 2, timestamp: 1, peer: ArchivePeer(bare: "a@x"), stanza: "<m/>"),
                for: username))
            try stores.archive.setPreferences(ArchivePreferences(defaultRule: .roster), of: username)
        }
        #expect(try count("archive_messages", in: database) == 2)
        #expect(try count("archive_preferences", in: database) == 2)
        #expect(try stores.accounts.deleteAccount("romeo"))
        #expect(try count("archive_messages", in: database) == 1)
        #expect(try count("archive_preferences", in: database) == 1)
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
        ("SELECT id FROM archive_messages WHERE account_id = 1 AND id > 5 ORDER BY id LIMIT 51", "archive_messages_by_account"),
        ("SELECT id FROM archive_messages WHERE account_id = 1 ORDER BY id DESC LIMIT 51", "archive_messages_by_account"),
        ("SELECT id FROM archive_messages WHERE account_id = 1 AND peer = 'a@x' ORDER BY id LIMIT 51", "archive_messages_by_peer"),
    ])
    func queriesUseAnIndexWithoutSorting(query: String, index: String) throws {
        let database = try migratedInMemoryDatabase()
        let plan = try database.prepare("EXPLAIN QUERY PLAN " + query)
        var details: [String] = []
        while try plan.step() { details.append(plan.string(at: 3) ?? "") }
        #expect(details.contains { $0.contains(index) }, "\(details)")
        #expect(!details.contains { $0.contains("TEMP B-TREE") }, "no sorting step: \(details)")
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
