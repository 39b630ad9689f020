import Dispatch
import Foundation
import Testing

@testable import SQLiteKit

/// The storage thread: order, errors, shutdown, closing, and `async` callers.
@Suite struct StorageQueueTests {
    /// A queue whose context is an in-memory database; `closed` counts the
    /// calls of `close`, and whether each ran on the storage thread.
    private func inMemoryQueue(closed: Locked<[Bool]> = Locked([])) throws -> StorageQueue<Database> {
        let queue = Locked<StorageQueue<Database>?>(nil)
        let started = try StorageQueue<Database>(name: "storage-queue-tests") {
            try Database.inMemory()
        } close: { database in
            let onThread = queue.withValue { $0?.isStorageThread ?? false }
            closed.withValue { $0.append(onThread) }
            database.close()
        }
        queue.withValue { $0 = started }
        return started
    }

    @Test func jobsRunInSubmissionOrderOnTheStorageThread() throws {
        let queue = try inMemoryQueue()
        defer { queue.shutdown() }
        let ran = Locked<[Int]>([])
        let completed = Locked<[Int]>([])
        let onStorageThread = Locked<Bool>(true)
        let allDone = DispatchSemaphore(value: 0)
        let jobCount = 200
        for index in 0..<jobCount {
            queue.submit { _ in
                ran.withValue { $0.append(index) }
                return index
            } completion: { result in
                let onThread = queue.isStorageThread
                onStorageThread.withValue { $0 = $0 && onThread }
                let count = completed.withValue { list in
                    list.append((try? result.get()) ?? -1)
                    return list.count
                }
                if count == jobCount { allDone.signal() }
            }
        }
        allDone.wait()
        #expect(ran.withValue { $0 } == Array(0..<jobCount))
        #expect(completed.withValue { $0 } == Array(0..<jobCount))
        #expect(onStorageThread.withValue { $0 }, "completions run on the storage thread")
        #expect(!queue.isStorageThread)
    }

    @Test func errorsReachTheCompletionAndPerform() throws {
        let queue = try inMemoryQueue()
        defer { queue.shutdown() }
        let delivered = Locked<Result<Int, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.submit { _ -> Int in
            throw PlannedError()
        } completion: { result in
            delivered.withValue { $0 = result }
            done.signal()
        }
        done.wait()
        let result = try #require(delivered.withValue { $0 })
        #expect(throws: PlannedError.self) { try result.get() }

        let error = try #require(throws: DatabaseError.self) {
            try queue.perform { database in try database.execute("SELECT * FROM nowhere") }
        }
        #expect(error.sql == "SELECT * FROM nowhere")
        #expect(try queue.perform { _ in 42 } == 42, "the queue goes on after errors")
    }

    @Test func shutdownFinishesQueuedJobsThenRefusesNewOnes() throws {
        let queue = try inMemoryQueue()
        let finished = Locked(0)
        for _ in 0..<50 {
            queue.submit { _ in
                Thread.sleep(forTimeInterval: 0.001)
            } completion: { _ in
                finished.withValue { $0 += 1 }
            }
        }
        queue.shutdown()
        #expect(finished.withValue { $0 } == 50)

        let refused = Locked<Result<Int, any Error>?>(nil)
        queue.submit { _ in 0 } completion: { result in refused.withValue { $0 = result } }
        let result = try #require(refused.withValue { $0 }, "refused at once, on this thread")
        #expect(throws: StorageQueueError.shutDown) { try result.get() }
        #expect(throws: StorageQueueError.shutDown) { try queue.perform { _ in 1 } }
        queue.shutdown()
    }

    @Test func shutdownClosesTheContextOnceAfterTheLastJob() throws {
        let closed = Locked<[Bool]>([])
        let queue = try inMemoryQueue(closed: closed)
        let closedBeforeLastJob = Locked<Bool?>(nil)
        queue.submit { _ in
            Thread.sleep(forTimeInterval: 0.01)
            closedBeforeLastJob.withValue { $0 = !closed.withValue { $0 }.isEmpty }
        } completion: { _ in }
        queue.shutdown()
        #expect(closedBeforeLastJob.withValue { $0 } == false)
        #expect(closed.withValue { $0 } == [true], "closed once, on the storage thread")
        queue.shutdown()
        #expect(closed.withValue { $0 }.count == 1)
    }

    @Test func anOpenErrorIsThrownFromInit() throws {
        #expect(throws: PlannedError.self) {
            _ = try StorageQueue<Database>(name: "storage-queue-tests") {
                throw PlannedError()
            } close: { database in
                database.close()
            }
        }
    }

    @Test func asyncPerformWaitsForItsJobInSubmissionOrder() async throws {
        let queue = try inMemoryQueue()
        defer { queue.shutdown() }
        let ran = Locked<[String]>([])
        queue.submit { database in
            try database.execute("CREATE TABLE t (name TEXT)")
            ran.withValue { $0.append("create") }
        } completion: { _ in }
        let count = try await queue.perform { database in
            ran.withValue { $0.append("count") }
            return try database.withCachedStatement("SELECT count(*) FROM t") { statement in
                _ = try statement.step()
                return statement.int(at: 0)
            }
        }
        #expect(count == 0, "the table the earlier job created is there")
        #expect(ran.withValue { $0 } == ["create", "count"])
        await #expect(throws: PlannedError.self) {
            try await queue.perform { _ in throw PlannedError() }
        }
    }
}

/// `StorageQueue.statistics`: the depth while jobs wait, and each finished
/// job's latency in its bucket.
@Suite struct StorageQueueStatisticsTests {
    @Test func depthCountsWaitingJobsAndLatenciesLandInBuckets() throws {
        let queue = try StorageQueue<Int>(name: "storage-queue-statistics") { 0 } close: { _ in }
        defer { queue.shutdown() }
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        queue.submit { _ in release.wait() } completion: { _ in done.signal() }
        queue.submit { _ in } completion: { _ in done.signal() }
        #expect(queue.statistics.depth == 2)
        Thread.sleep(forTimeInterval: 0.03)
        release.signal()
        done.wait()
        done.wait()
        var statistics = queue.statistics
        let deadline = Date(timeIntervalSinceNow: 5)
        while statistics.depth > 0, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
            statistics = queue.statistics
        }
        #expect(statistics.depth == 0)
        #expect(statistics.latencyCounts.reduce(0, +) == 2)
        let bounds = StorageQueueStatistics.latencyBounds
        // Both waited for the first one's 30 ms at least: no bucket below 25 ms.
        let below = bounds.firstIndex { $0 >= 25_000_000 }!
        #expect(statistics.latencyCounts[..<below].allSatisfy { $0 == 0 }, "\(statistics.latencyCounts)")
        #expect(statistics.latencySum >= 60_000_000)
    }
}
