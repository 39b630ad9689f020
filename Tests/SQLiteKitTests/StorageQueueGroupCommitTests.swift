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

    /// A queue whose storage thread waits for `gate`, a second connection
    /// to its file, and a trace.
    private struct HeldQueue: Sendable {
        let queue: StorageQueue<Database>
        let observer: Locked<Database>
        let trace = Trace()
        let gate = DispatchSemaphore(value: 0)
    }

    /// Runs `body` with a `HeldQueue` on a fresh file; the storage thread
    /// moves on when `body` signals the gate (or returns). It is held in a
    /// job of its own, which has begun before `body` runs, so that every
    /// job `body` submits waits in the next batch.
    private func withHeldQueue(_ body: (HeldQueue) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/group.sqlite"
            let held = HeldQueue(queue: try queue(at: path), observer: Locked(try Database(path: path)))
            defer { held.queue.shutdown() }
            defer { held.gate.signal() }
            let holding = DispatchSemaphore(value: 0)
            held.queue.submit { _ in
                holding.signal()
                held.gate.wait()
            } completion: { _ in }
            holding.wait()
            try body(held)
        }
    }

    /// Submits a grouped job `name` that inserts `value` into `t` and
    /// records what is committed while it runs and once it has completed.
    private func submitInsert(_ name: String, _ value: Int, to held: HeldQueue, then fail: Bool = false) {
        let (trace, observer) = (held.trace, held.observer)
        held.queue.submitGrouped { database in
            try database.execute("INSERT INTO t (n) VALUES (\(value))")
            trace.record("run \(name), \(Self.committedRows(observer)) committed")
            if fail { throw PlannedError() }
        } completion: { result in
            let outcome = (try? result.get()) != nil ? "ok" : "failed"
            trace.complete("\(outcome) \(name), \(Self.committedRows(observer)) committed")
        }
    }

    @Test func groupedJobsShareOneCommitAndCompleteAfterIt() throws {
        try withHeldQueue { held in
            for index in 1...4 {
                submitInsert("g\(index)", index, to: held)
            }
            held.gate.signal()
            #expect(
                held.trace.events(afterCompletions: 4) == [
                    "run g1, 0 committed", "run g2, 0 committed", "run g3, 0 committed", "run g4, 0 committed",
                    "ok g1, 4 committed", "ok g2, 4 committed", "ok g3, 4 committed", "ok g4, 4 committed",
                ])
        }
    }

    @Test func aFailingJobUndoesOnlyItsOwnWrites() throws {
        try withHeldQueue { held in
            submitInsert("g1", 1, to: held)
            submitInsert("g2", 2, to: held, then: true)
            submitInsert("g3", 3, to: held)
            held.gate.signal()
            let events = held.trace.events(afterCompletions: 3)
            #expect(events.suffix(3) == ["ok g1, 2 committed", "failed g2, 2 committed", "ok g3, 2 committed"])
            let kept = try held.queue.perform { database in
                let statement = try database.prepare("SELECT n FROM t ORDER BY n")
                var values: [Int] = []
                while try statement.step() { values.append(statement.int(at: 0)) }
                return values
            }
            #expect(kept == [1, 3])
        }
    }

    @Test func aJobSubmittedAloneEndsTheGroupBeforeIt() throws {
        try withHeldQueue { held in
            submitInsert("g1", 1, to: held)
            submitInsert("g2", 2, to: held)
            held.queue.submit { database in
                let committed = Self.committedRows(held.observer)
                held.trace.record("run alone, \(committed) committed, in a transaction: \(database.isInTransaction)")
            } completion: { _ in
                held.trace.complete("ok alone")
            }
            submitInsert("g3", 3, to: held)
            held.gate.signal()
            #expect(
                held.trace.events(afterCompletions: 4) == [
                    "run g1, 0 committed", "run g2, 0 committed", "ok g1, 2 committed", "ok g2, 2 committed",
                    "run alone, 2 committed, in a transaction: false", "ok alone",
                    "run g3, 2 committed", "ok g3, 3 committed",
                ])
        }
    }

    @Test func aFailedCommitFailsEveryJobOfTheGroup() throws {
        try withHeldQueue { held in
            submitInsert("g1", 1, to: held)
            // A deferred foreign key is checked at the commit, not before.
            let dangling = Locked<Result<Void, any Error>?>(nil)
            held.queue.submitGrouped { database in
                try database.execute("INSERT INTO child (parent_id) VALUES (42)")
            } completion: { result in
                dangling.withValue { $0 = result }
                held.trace.complete("dangling done")
            }
            held.gate.signal()
            #expect(
                held.trace.events(afterCompletions: 2) == [
                    "run g1, 0 committed", "failed g1, 0 committed", "dangling done",
                ])
            let error = try #require(throws: DatabaseError.self) { try #require(dangling.withValue { $0 }).get() }
            #expect(error.resultCode == .constraintForeignKey)
            #expect(try held.queue.perform { database in database.isInTransaction } == false)
            #expect(Self.committedRows(held.observer) == 0, "nothing of the group stays")
        }
    }

    @Test func jobsBeforeOneThatEndedTheTransactionAreReportedRolledBack() throws {
        try withHeldQueue { held in
            let outcomes = Locked<[String: Result<Void, any Error>]>([:])
            func submit(_ name: String, _ job: @escaping @Sendable (Database) throws -> Void) {
                held.queue.submitGrouped(job) { result in
                    outcomes.withValue { $0[name] = result }
                    held.trace.complete(name)
                }
            }
            submit("first") { database in try database.execute("INSERT INTO t (n) VALUES (1)") }
            // What SQLite does itself after some errors (SQLITE_FULL, SQLITE_IOERR…).
            submit("breaking") { database in
                try database.execute("ROLLBACK")
                throw PlannedError()
            }
            submit("next") { database in try database.execute("INSERT INTO t (n) VALUES (3)") }
            held.gate.signal()
            #expect(held.trace.events(afterCompletions: 3) == ["first", "breaking", "next"])
            let results = outcomes.withValue { $0 }
            #expect(throws: StorageQueueError.rolledBack) { try results["first"]?.get() }
            #expect(throws: PlannedError.self) { try results["breaking"]?.get() }
            #expect(throws: Never.self) { try results["next"]?.get() }
            #expect(Self.committedRows(held.observer) == 1, "only the next group's row")
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
