import SQLiteKit
import Testing
import XMPPCore

@testable import XMPPStorage

/// What only the SQLite account store can show: its rows.
@Suite struct SQLiteAccountStoreTests {
    private func count(_ table: String, in database: Database) throws -> Int {
        let statement = try database.prepare("SELECT count(*) FROM \(table)")
        _ = try statement.step()
        return statement.int(at: 0)
    }

    @Test func deletingAnAccountCascadesToItsCredentialRows() throws {
        let database = try migratedInMemoryDatabase()
        let store = SQLiteAccountStore(database: database)
        #expect(try store.createAccount("romeo", credentials: sampleCredentialPair(seed: 1)))
        #expect(try store.createAccount("juliet", credentials: sampleCredentialPair(seed: 2)))
        #expect(try count("scram_credentials", in: database) == 4)

        #expect(try store.deleteAccount("romeo"))
        #expect(try count("scram_credentials", in: database) == 2)
        #expect(try count("accounts", in: database) == 1)
    }

    @Test func noPasswordColumnExists() throws {
        let database = try migratedInMemoryDatabase()
        let statement = try database.prepare(
            "SELECT name FROM pragma_table_info('scram_credentials') ORDER BY cid")
        var columns: [String] = []
        while try statement.step() { columns.append(statement.string(at: 0) ?? "") }
        #expect(
            columns == [
                "account_id", "hash_function", "salt", "iterations", "stored_key", "server_key",
            ])
    }

    @Test func aDamagedRecordIsReportedAsCorrupt() throws {
        let database = try migratedInMemoryDatabase()
        let store = SQLiteAccountStore(database: database)
        #expect(try store.createAccount("romeo", credentials: sampleCredentialPair()))
        try database.execute("UPDATE scram_credentials SET stored_key = x'00'")

        let error = try #require(throws: DatabaseError.self) {
            _ = try store.credentials(of: "romeo", for: .sha1)
        }
        #expect(error.resultCode == .corrupt)
    }

    @Test func theSchemaRefusesUnknownHashFunctions() throws {
        let database = try migratedInMemoryDatabase()
        #expect(
            try SQLiteAccountStore(database: database).createAccount(
                "romeo", credentials: sampleCredentialPair()))
        let insert = try database.prepare(
            """
            INSERT INTO scram_credentials
            VALUES ((SELECT id FROM accounts), 'md5', x'01', 4096, x'02', x'03')
            """)
        let error = try #require(throws: DatabaseError.self) { try insert.run() }
        #expect(error.resultCode == .constraintCheck)
    }
}
