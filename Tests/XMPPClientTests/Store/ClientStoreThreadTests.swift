import Testing
import XMPPCore

@testable import XMPPClient

/// `ClientStore` runs its SQL on a thread of its own, one call at a time.
@Suite struct ClientStoreThreadTests {
    @Test func theSQLRunsOnTheStoresOwnThread() async throws {
        let store = try ClientStore.inMemory()
        #expect(try await store.queue.perform { _ in store.queue.isStorageThread })
        #expect(!store.queue.isStorageThread)
    }

    @Test func callsFromManyTasksAreEachRunOnce() async throws {
        let store = try ClientStore.inMemory()
        let added = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<50 {
                group.addTask { try await store.record(message("\(index)", at: Int64(index), id: "m\(index % 25)")) }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(added == 25, "of two messages with one id, one is a duplicate")
        let page = try await store.conversation(account: People.juliet, contact: People.romeo, limit: 100)
        #expect(page.count == 25)
    }
}
