import Dispatch
import Foundation
import Testing

@testable import SQLiteKit

/// `StorageQueue.submitGrouped`: grouped jobs share one transaction, each
/// in a savepoint, and complete only once it has committed.
///
/// The storage thread is held by a job that waits for a gate, so that the
/// jobs submitted meanwhile are queued side by side when it moves on. A
/// second connection to the same file sees only committed rows: what it
/// counts inside a job and inside a completion tells when commits happened.
@Suite struct StorageQueueGroupCommitTests {
    /// A queue on a database file with a table `t (n)`, grouping in it.
    private func queue(at path: String) throws -> StorageQueue<Database> {
        try StorageQueue<Database>(name: "group-commit-tests") {
            let database = try Database(path: path)
            try database.execute(
                """
                CREATE TABLE t (n INTEGER NOT NULL);
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (
                    parent_id INTEGER NOT NULL REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED
                );
                """)
            return database
        } close: { database in
            database.close()
        } database: { $0 }
    }

    /// What each job and completion saw and got, in the order they ran.
    private final class Trace: @unchecked Sendable {
        // @unchecked Sendable: everything is behind `lock`.
        private let lock = NSLock()
        private var events: [String] = []
        private let finished = DispatchSemaphore(value: 0)

        func record(_ event: String) {
            lock.lock()
            events.append(event)
            lock.unlock()
        }

        func complete(_ event: String) {
            record(event)
            finished.signal()
        }

        /// Waits for `count` completions, then returns every event.
        func events(afterCompletions count: Int) -> [String] {
            for _ in 0..<count { finished.wait() }
            lock.lock()
            defer { lock.unlock() }
            return events
        }
    }

    /// Rows committed to `t`, as another connection sees them.
    private static func committedRows(_ observer: Locked<Database>) -> Int {
        observer.withValue { database in
            guard let statement = try? database.prepare("SELECT count(*) FROM t"), (try? statement.step()) == true
            else { return -1 }
            return statement.int(at: 0)
        }
    }

    /// Holds the storage thread until the returned semaphore is signalled.
    private func holdStorageThread(_ queue: StorageQueue<Database>) -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        queue.submit { _ in gate.wait() } completion: { _ in }
        return gate
    }

    /// Submits a grouped job `name` that inserts `value` into `t` and
    /// records what is committed while it runs and once it has completed.
    private func submitInsert(
        _ name: String, _ value: Int, to queue: StorageQueue<Database>, trace: Trace, observer: Locked<Database>,
        then fail: Bool = false
    ) {
        queue.submitGrouped { database in
            try database.execute("INSERT INTO t (n) VALUES (\(value))")
            trace.record("run \(name), \(Self.committedRows(observer)) committed")
            if fail { throw PlannedError() }
        } completion: { result in
            let outcome = (try? result.get()) != nil ? "ok" : "failed"
            trace.complete("\(outcome) \(name), \(Self.committedRows(observer)) committed")
        }
    }

    @Test func groupedJobsShareOneCommitAndCompleteAfterIt() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/group.sqlite"
            let queue = try queue(at: path)
            defer { queue.shutdown() }
            let observer = Locked(try Database(path: path))
            let trace = Trace()
            let gate = holdStorageThread(queue)
            for index in 1...4 {
                submitInsert("g\(index)", index, to: queue, trace: trace, observer: observer)
            }
            gate.signal()
            #expect(
                trace.events(afterCompletions: 4) == [
                    "run g1, 0 committed", "run g2, 0 committed", "run g3, 0 committed", "run g4, 0 committed",
                    "ok g1, 4 committed", "ok g2, 4 committed", "ok g3, 4 committed", "ok g4, 4 committed",
                ])
        }
    }

    @Test func aFailingJobUndoesOnlyItsOwnWrites() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/group.sqlite"
            let queue = try queue(at: path)
            defer { queue.shutdown() }
            let observer = Locked(try Database(path: path))
            let trace = Trace()
            let gate = holdStorageThread(queue)
            submitInsert("g1", 1, to: queue, trace: trace, observer: observer)
            submitInsert("g2", 2, to: queue, trace: trace, observer: observer, then: true)
            submitInsert("g3", 3, to: queue, trace: trace, observer: observer)
            gate.signal()
            let events = trace.events(afterCompletions: 3)
            #expect(events.suffix(3) == ["ok g1, 2 committed", "failed g2, 2 committed", "ok g3, 2 committed"])
            let kept = try queue.perform { database in
                let statement = try database.prepare("SELECT n FROM t ORDER BY n")
                var values: [Int] = []
                while try statement.step() { values.append(statement.int(at: 0)) }
                return values
            }
            #expect(kept == [1, 3])
        }
    }

    @Test func aJobSubmittedAloneEndsTheGroupBeforeIt() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/group.sqlite"
            let queue = try queue(at: path)
            defer { queue.shutdown() }
            let observer = Locked(try Database(path: path))
            let trace = Trace()
            let gate = holdStorageThread(queue)
            submitInsert("g1", 1, to: queue, trace: trace, observer: observer)
            submitInsert("g2", 2, to: queue, trace: trace, observer: observer)
            queue.submit { database in
                trace.record("run alone, \(Self.committedRows(observer)) committed, in a transaction: \(database.isInTransaction)")
            } completion: { _ in
                trace.complete("ok alone")
            }
            submitInsert("g3", 3, to: queue, trace: trace, observer: observer)
            gate.signal()
            #expect(
                trace.events(afterCompletions: 4) == [
                    "run g1, 0 committed", "run g2, 0 committed", "ok g1, 2 committed", "ok g2, 2 committed",
                    "run alone, 2 committed, in a transaction: false", "ok alone",
                    "run g3, 2 committed", "ok g3, 3 committed",
                ])
        }
    }

    @Test func aFailedCommitFailsEveryJobOfTheGroup() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/group.sqlite"
            let queue = try queue(at: path)
            defer { queue.shutdown() }
            let observer = Locked(try Database(path: path))
            let trace = Trace()
            let gate = holdStorageThread(queue)
            submitInsert("g1", 1, to: queue, trace: trace, observer: observer)
            // A deferred foreign key is checked at the commit, not before.
            let dangling = Locked<Result<Void, any Error>?>(nil)
            queue.submitGrouped { database in
                try database.execute("INSERT INTO child (parent_id) VALUES (42)")
            } completion: { result in
                dangling.withValue { $0 = result }
                trace.complete("dangling done")
            }
            gate.signal()
            #expect(
                trace.events(afterCompletions: 2) == [
                    "run g1, 0 committed", "failed g1, 0 committed", "dangling done",
                ])
            let error = try #require(throws: DatabaseError.self) { try #require(dangling.withValue { $0 }).get() }
            #expect(error.resultCode == .constraintForeignKey)
            #expect(try queue.perform { database in database.isInTransaction } == false)
            #expect(Self.committedRows(observer) == 0, "nothing of the group stays")
        }
    }

    @Test func jobsBeforeOneThatEndedTheTransactionAreReportedRolledBack() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/group.sqlite"
            let queue = try queue(at: path)
            defer { queue.shutdown() }
            let observer = Locked(try Database(path: path))
            let trace = Trace()
            let gate = holdStorageThread(queue)
            let outcomes = Locked<[String: Result<Void, any Error>]>([:])
            func submit(_ name: String, _ job: @escaping @Sendable (Database) throws -> Void) {
                queue.submitGrouped(job) { result in
                    outcomes.withValue { $0[name] = result }
                    trace.complete(name)
                }
            }
            submit("first") { database in try database.execute("INSERT INTO t (n) VALUES (1)") }
            // What SQLite does itself after some errors (SQLITE_FULL, SQLITE_IOERR…).
            submit("breaking") { database in
                try database.execute("ROLLBACK")
                throw PlannedError()
            }
            submit("next") { database in try database.execute("INSERT INTO t (n) VALUES (3)") }
            gate.signal()
            #expect(trace.events(afterCompletions: 3) == ["first", "breaking", "next"])
            let results = outcomes.withValue { $0 }
            #expect(throws: StorageQueueError.rolledBack) { try results["first"]?.get() }
            #expect(throws: PlannedError.self) { try results["breaking"]?.get() }
            #expect(throws: Never.self) { try results["next"]?.get() }
            #expect(Self.committedRows(observer) == 1, "only the next group's row")
        }
    }

    @Test func withoutADatabaseAGroupedJobRunsAlone() throws {
        let queue = try StorageQueue<Int>(name: "group-commit-tests") { 7 } close: { _ in }
        defer { queue.shutdown() }
        let done = DispatchSemaphore(value: 0)
        let got = Locked<Int?>(nil)
        queue.submitGrouped { context in context * 6 } completion: { result in
            got.withValue { $0 = try? result.get() }
            done.signal()
        }
        done.wait()
        #expect(got.withValue { $0 } == 42)
    }
}
