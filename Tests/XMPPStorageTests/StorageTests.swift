import Foundation
import SQLiteKit
import Testing

@testable import XMPPStorage

/// The server's storage as `Storage` opens it: the directory, the schema,
/// private files, and the storage thread over the stores.
@Suite struct StorageTests {
    private func tableExists(_ name: String, in database: Database) throws -> Bool {
        let statement = try database.prepare("SELECT 1 FROM sqlite_master WHERE name = ?")
        try statement.bind(name)
        return try statement.step()
    }

    @Test func theServerSchemaMigratesAnEmptyDatabase() throws {
        let database = try migratedInMemoryDatabase()
        #expect(try Storage.migrator.appliedMigrations(in: database) == Storage.migrator.names)
        #expect(try tableExists("accounts", in: database))
        #expect(try tableExists("scram_credentials", in: database))
    }

    @Test func openCreatesTheDirectoryMigratesAndClosesOnShutdown() throws {
        try withTemporaryDirectory { parent in
            let directory = parent + "/data/swiftlet"
            let queue = try Storage.open(directory: directory)
            let created = try queue.perform { stores in
                try stores.accounts.createAccount("romeo", credentials: sampleCredentialPair())
            }
            #expect(created)
            let file = directory + "/" + Storage.fileName
            #expect(FileManager.default.fileExists(atPath: file + "-wal"))
            let permissions = try FileManager.default.attributesOfItem(atPath: directory)[
                .posixPermissions]
            #expect((permissions as? NSNumber)?.intValue == 0o700)

            queue.shutdown()
            #expect(
                !FileManager.default.fileExists(atPath: file + "-wal"), "closed and checkpointed")

            let reopened = try Storage.open(directory: directory)
            defer { reopened.shutdown() }
            let (applied, usernames) = try reopened.perform { stores in
                let database = try #require(stores.database)
                return (
                    try Storage.migrator.appliedMigrations(in: database),
                    try stores.accounts.usernames()
                )
            }
            #expect(applied == Storage.migrator.names)
            #expect(usernames == ["romeo"])
        }
    }

    @Test func aJobCanGroupStoreCallsInOneTransaction() throws {
        let queue = try Storage.openInMemory()
        defer { queue.shutdown() }
        #expect(throws: PlannedError.self) {
            try queue.perform { stores in
                try #require(stores.database).transaction {
                    _ = try stores.accounts.createAccount(
                        "romeo", credentials: sampleCredentialPair())
                    _ = try stores.accounts.createAccount(
                        "juliet", credentials: sampleCredentialPair())
                    throw PlannedError()
                }
            }
        }
        #expect(try queue.perform { stores in try stores.accounts.accountCount() } == 0)
    }

    /// The permission bits of the file at `path`.
    private func mode(of path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    /// A data directory others may read, as a packaged `/var/lib/swiftlet`
    /// often is.
    private func openDataDirectory() throws -> String {
        let directory = "/tmp/swiftlet-storage-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
        return directory
    }

    /// The server's database files, once it has written something.
    private func openStorageAndWrite(in directory: String) throws -> [String] {
        let storage = try Storage.open(directory: directory)
        defer { storage.shutdown() }
        #expect(try storage.perform { try $0.accounts.createAccount("romeo", credentials: sampleCredentialPair()) })
        let path = directory + "/" + Storage.fileName
        let files = [path, path + "-wal", path + "-shm"]
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "\(file) exists") }
        return try files.map { file in
            let mode = try mode(of: file)
            return mode == 0o600 ? "private" : "\(file): \(String(mode, radix: 8))"
        }
    }

    @Test func newDatabaseFilesArePrivateInADirectoryOthersCanRead() throws {
        let directory = try openDataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let modes = try openStorageAndWrite(in: directory)
        #expect(modes == ["private", "private", "private"])
    }

    @Test func anExistingDatabaseReadableByOthersIsMadePrivate() throws {
        let directory = try openDataDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + Storage.fileName
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]))
        let before = try mode(of: path)
        #expect(before == 0o644)
        let modes = try openStorageAndWrite(in: directory)
        #expect(modes == ["private", "private", "private"])
    }
}
