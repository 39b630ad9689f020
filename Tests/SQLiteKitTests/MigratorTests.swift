import Foundation
import Testing

@testable import SQLiteKit

/// Named migrations: applied once, in order, each in a transaction.
@Suite struct MigratorTests {
    /// A migrator whose migrations log their names to `log` when they run.
    private func migrator(_ names: [String], log: Locked<[String]>) -> Migrator {
        var migrator = Migrator()
        for name in names {
            migrator.register(name) { database in
                try database.execute("CREATE TABLE \"\(name)\" (x)")
                log.withValue { $0.append(name) }
            }
        }
        return migrator
    }

    private func tableExists(_ name: String, in database: Database) throws -> Bool {
        let statement = try database.prepare("SELECT 1 FROM sqlite_master WHERE name = ?")
        try statement.bind(name)
        return try statement.step()
    }

    @Test func migrationsRunOnceInOrderAndAreSkippedOnReopen() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/migrate.sqlite"
            let log = Locked<[String]>([])
            do {
                let database = try Database(path: path)
                try migrator(["a1", "b2"], log: log).migrate(database)
                try migrator(["a1", "b2"], log: log).migrate(database)
            }
            #expect(log.withValue { $0 } == ["a1", "b2"])

            let reopened = try Database(path: path)
            try migrator(["a1", "b2", "c3"], log: log).migrate(reopened)
            #expect(log.withValue { $0 } == ["a1", "b2", "c3"], "only the new one ran")
            #expect(try Migrator().appliedMigrations(in: reopened) == ["a1", "b2", "c3"])
        }
    }

    @Test func aFailingMigrationIsRolledBackAndNotRecorded() throws {
        let database = try Database.inMemory()
        var migrator = Migrator()
        migrator.register("0001-good") { try $0.execute("CREATE TABLE good (x)") }
        migrator.register("0002-bad") { database in
            try database.execute("CREATE TABLE half_done (x)")
            throw PlannedError()
        }
        #expect(throws: PlannedError.self) { try migrator.migrate(database) }

        #expect(try tableExists("good", in: database))
        #expect(try !tableExists("half_done", in: database))
        #expect(try migrator.appliedMigrations(in: database) == ["0001-good"])
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        let database = try Database.inMemory()
        let log = Locked<[String]>([])
        try migrator(["0001-old", "0002-future"], log: log).migrate(database)

        let error = try #require(throws: MigrationError.self) {
            try migrator(["0001-old", "0003-other"], log: log).migrate(database)
        }
        #expect(error.unknownMigrations == ["0002-future"])
        #expect(try !tableExists("0003-other", in: database), "nothing ran")
    }
}
