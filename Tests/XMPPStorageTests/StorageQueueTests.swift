import Dispatch
import Foundation
import Testing

@testable import XMPPStorage

/// The storage thread: order, errors, shutdown, and `Storage.open`.
@Suite struct StorageQueueTests {
    private func inMemoryQueue() throws -> StorageQueue {
        try StorageQueue { Stores(accounts: InMemoryAccountStore()) }
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
        let queue = try Storage.openInMemory()
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
            try queue.perform { stores in try stores.database?.execute("SELECT * FROM nowhere") }
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

    @Test func aStoresFactoryErrorIsThrownFromInit() throws {
        #expect(throws: PlannedError.self) {
            _ = try StorageQueue { throw PlannedError() }
        }
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
}
