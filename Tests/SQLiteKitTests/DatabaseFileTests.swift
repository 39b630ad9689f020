import CSQLite
import Dispatch
import Foundation
import Testing

@testable import SQLiteKit

/// A database file: WAL, pragmas, and a second connection beside the first.
@Suite struct DatabaseFileTests {
    private func pragma(_ name: String, of database: Database) throws -> String? {
        let statement = try database.prepare("PRAGMA \(name)")
        return try statement.step() ? statement.string(at: 0) : nil
    }

    private func makeFile(in directory: String) throws -> (path: String, Database) {
        let path = directory + "/test.sqlite"
        let database = try Database(path: path)
        try database.execute("CREATE TABLE t (name TEXT)")
        return (path, database)
    }

    /// Opens a second connection on another thread, as an admin command
    /// would, and tries one insert there.
    ///
    /// Returns once the connection is open and about to insert; the returned
    /// function waits for the insert and tells how it went and how long it took.
    private func startInsertFromAnotherConnection(
        path: String, busyTimeout: Duration
    ) -> () -> (Result<Void, any Error>, Duration) {
        let outcome = Locked<(Result<Void, any Error>, Duration)?>(nil)
        let opened = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let clock = ContinuousClock()
            do {
                let admin = try Database(
                    path: path, configuration: Database.Configuration(busyTimeout: busyTimeout))
                let start = clock.now
                opened.signal()
                let result = Result { try admin.execute("INSERT INTO t VALUES ('from admin')") }
                outcome.withValue { $0 = (result, clock.now - start) }
            } catch {
                opened.signal()
                outcome.withValue { $0 = (.failure(error), .zero) }
            }
            done.signal()
        }.start()
        opened.wait()
        return {
            done.wait()
            return outcome.withValue { $0! }
        }
    }

    @Test func aFileDatabaseIsInWALModeWithTheConfiguredPragmas() throws {
        try withTemporaryDirectory { directory in
            let (path, database) = try makeFile(in: directory)
            #expect(try pragma("journal_mode", of: database) == "wal")
            #expect(try pragma("foreign_keys", of: database) == "1")
            #expect(try pragma("synchronous", of: database) == "2", "FULL by default")
            #expect(try pragma("busy_timeout", of: database) == "5000")
            #expect(try pragma("cache_size", of: database) == "-16384", "16 MiB")
            #expect(try pragma("wal_autocheckpoint", of: database) == "0", "SQLite's own replaced by the checkpointer's")
            #expect(database.checkpointer != nil)
            try database.execute("INSERT INTO t VALUES ('x')")
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))

            let relaxed = try Database(
                path: path,
                configuration: Database.Configuration(
                    busyTimeout: .milliseconds(250), synchronous: .normal, cacheKiB: 512,
                    walAutocheckpointPages: 100, checkpointsInBackground: false))
            #expect(try pragma("synchronous", of: relaxed) == "1")
            #expect(try pragma("busy_timeout", of: relaxed) == "250")
            #expect(try pragma("cache_size", of: relaxed) == "-512")
            #expect(try pragma("wal_autocheckpoint", of: relaxed) == "100")
            #expect(relaxed.checkpointer == nil)
        }
    }

    /// Commits of one page each, as many as `count`.
    private func commitPages(_ count: Int, to database: Database) throws {
        for number in 0..<count {
            try database.execute("INSERT INTO t VALUES ('\(String(repeating: "x", count: 3000))\(number)')")
        }
    }

    @Test func theCheckpointerThreadCopiesTheWALOnceItHoldsTheThreshold() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/checkpoints.sqlite"
            let database = try Database(path: path, configuration: Database.Configuration(walAutocheckpointPages: 10))
            try database.execute("CREATE TABLE t (value TEXT)")
            let checkpointer = try #require(database.checkpointer)
            #expect(checkpointer.checkpoints == 0)
            try commitPages(40, to: database)
            let deadline = ContinuousClock.now + .seconds(10)
            while checkpointer.checkpoints == 0, ContinuousClock.now < deadline { usleep(1000) }
            #expect(checkpointer.checkpoints > 0)
            database.close()
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "the last connection removed the WAL")
        }
    }

    @Test func withoutItsThreadTheWriterStillBoundsTheWAL() throws {
        try withTemporaryDirectory { directory in
            let database = try Database(
                path: directory + "/bounded.sqlite", configuration: Database.Configuration(walAutocheckpointPages: 10))
            try database.execute("CREATE TABLE t (value TEXT)")
            try #require(database.checkpointer).stop()
            try commitPages(300, to: database)
            let wal = try #require(database.checkpointPassively())
            #expect(wal.pages < 10 * WALCheckpointer.limitFactor + 10, "restarted after the writer's own checkpoints")
            database.close()
        }
    }

    @Test func theSwitchToWALWaitsForAnotherConnectionsLock() throws {
        // SQLite answers the switch to WAL with SQLITE_BUSY at once, without
        // its busy handler, while another connection writes the file in its
        // old journal mode (as when two admin commands create it together).
        try withTemporaryDirectory { directory in
            let path = directory + "/switch.sqlite"
            var other: OpaquePointer?
            #expect(sqlite3_open(path, &other) == SQLITE_OK)
            defer { sqlite3_close(other) }
            #expect(sqlite3_exec(other, "CREATE TABLE t (value TEXT); BEGIN IMMEDIATE; INSERT INTO t VALUES (1);", nil, nil, nil) == SQLITE_OK)
            let released = DispatchSemaphore(value: 0)
            // Used by the other thread only while this one waits in `Database.init`.
            nonisolated(unsafe) let lockHolder = other
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(200)) {
                sqlite3_exec(lockHolder, "COMMIT", nil, nil, nil)
                released.signal()
            }
            let database = try Database(path: path, configuration: Database.Configuration(checkpointsInBackground: false))
            released.wait()
            #expect(try pragma("journal_mode", of: database) == "wal")
            database.close()
        }
    }

    @Test func aSecondConnectionWaitsForTheWriteLockInsteadOfFailing() throws {
        try withTemporaryDirectory { directory in
            let (path, server) = try makeFile(in: directory)
            try server.execute("BEGIN IMMEDIATE")
            try server.execute("INSERT INTO t VALUES ('from server')")
            // The admin connection tries to write while the server keeps the
            // write lock for another 300 ms.
            let adminInsert = startInsertFromAnotherConnection(path: path, busyTimeout: .seconds(5))
            Thread.sleep(forTimeInterval: 0.3)
            try server.execute("COMMIT")

            let (result, waited) = adminInsert()
            #expect(throws: Never.self) { try result.get() }
            #expect(waited >= .milliseconds(250), "it waited for the server's commit")
            let statement = try server.prepare("SELECT count(*) FROM t")
            _ = try statement.step()
            #expect(statement.int(at: 0) == 2)
        }
    }

    @Test func withoutABusyTimeoutTheSecondConnectionFailsAtOnce() throws {
        try withTemporaryDirectory { directory in
            let (path, server) = try makeFile(in: directory)
            try server.execute("BEGIN IMMEDIATE")
            let (result, _) = startInsertFromAnotherConnection(path: path, busyTimeout: .zero)()
            try server.execute("COMMIT")
            let error = try #require(throws: DatabaseError.self) { try result.get() }
            #expect(error.resultCode ~= .busy)
        }
    }

    @Test func aReaderDoesNotBlockAWriterInWALMode() throws {
        try withTemporaryDirectory { directory in
            let (path, server) = try makeFile(in: directory)
            try server.execute("INSERT INTO t VALUES ('before')")
            // A read transaction stays open while the statement is mid-way.
            let reader = try server.prepare("SELECT name FROM t")
            #expect(try reader.step())

            let (result, _) = startInsertFromAnotherConnection(path: path, busyTimeout: .zero)()
            #expect(throws: Never.self) { try result.get() }
            #expect(try !reader.step(), "the reader still sees its snapshot of one row")
        }
    }

    @Test func aFileThatIsNotADatabaseIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/garbage.sqlite"
            let garbage = Data(repeating: 0x42, count: 4096)
            #expect(FileManager.default.createFile(atPath: path, contents: garbage))
            let error = try #require(throws: DatabaseError.self) { try Database(path: path) }
            #expect(error.resultCode == .notADatabase)
        }
    }

    @Test func aMissingDirectoryCannotBeOpened() throws {
        let error = try #require(throws: DatabaseError.self) {
            try Database(path: "/tmp/swiftlet-no-such-directory-\(UUID().uuidString)/x.sqlite")
        }
        #expect(error.resultCode ~= .cannotOpen)
    }
}
