import Testing
import XMPPCore
import XMPPNet
@testable import XMPPServer
import XMPPStorage

/// Group commit: archive jobs wait for one flush, which writes them all.
@Suite struct ArchiveWriterTests {
    /// Storage that keeps jobs until the test runs them, like a storage
    /// thread that is busy.
    private final class HeldStorage: StorageJobs, @unchecked Sendable {
        // @unchecked: used from the test's one thread.
        let stores = Stores(accounts: InMemoryAccountStore())
        private(set) var jobs: [(Stores) -> Void] = []

        func submit<Value: Sendable>(
            _ job: @escaping @Sendable (Stores) throws -> Value,
            completion: @escaping @Sendable (Result<Value, any Error>) -> Void
        ) {
            jobs.append { stores in completion(Result { try job(stores) }) }
        }

        func runAll() {
            let queued = jobs
            jobs = []
            for job in queued { job(stores) }
        }
    }

    private let log = Logger(level: .error, label: "test", sink: StandardErrorSink())
    private let loop = ManualLoop()

    private func job(_ body: String, to recipient: String, rosterOnly: Bool = false) throws -> ArchiveWriter.Job {
        let message = Element(
            "message", namespace: NS.client, attributes: ["to": "\(recipient)@localhost", "type": "chat"],
            children: [.element(Element("body", namespace: NS.client, children: [.text(body)]))])
        return ArchiveWriter.Job(
            message: message, timestamp: 1, sender: try JID("romeo@localhost/orchard"), recipient: recipient,
            copies: [
                .init(owner: "romeo", peer: try JID("\(recipient)@localhost"), rosterOnly: false),
                .init(owner: recipient, peer: try JID("romeo@localhost/orchard"), rosterOnly: rosterOnly),
            ])
    }

    private func storesWithAccounts(_ storage: HeldStorage) throws {
        for name in ["romeo", "juliet", "nurse"] {
            #expect(try storage.stores.accounts.createAccount(name, credentials: StoredAccounts.credentials(for: "pw", iterations: 4096)))
        }
    }

    @Test func jobsWaitingTogetherAreWrittenByOneFlush() throws {
        let storage = HeldStorage()
        try storesWithAccounts(storage)
        let writer = ArchiveWriter()
        writer.resume(after: 41)
        let first = ArchiveQueue<ArchiveWriter.Job>.restartGap + 42
        for number in 1...3 {
            let (firstSequence, waiting) = try #require(
                writer.append(try job("m\(number)", to: "juliet"), on: loop, storage: storage, log: log))
            #expect(waiting == number)
            #expect(firstSequence == first + Int64(2 * number - 2), "numbered in queue order, two copies each")
        }
        #expect(storage.jobs.isEmpty, "gathering: no flush before the timer")
        loop.advance(by: ArchiveWriter.gatheringTime)
        #expect(storage.jobs.count == 1, "one flush for the three")
        storage.runAll()
        #expect(try storage.stores.archive.count(for: "romeo") == 3)
        #expect(try storage.stores.archive.count(for: "juliet") == 3)
        #expect(try storage.stores.archive.lastSequence() == first + 5)
        #expect(writer.append(try job("m4", to: "juliet"), on: loop, storage: storage, log: log)?.waiting == 1)
        loop.advance(by: ArchiveWriter.gatheringTime)
        #expect(storage.jobs.count == 1, "a new flush once the last one ran")
        #expect(try writer.flush(storage.stores, log: log) == 2, "a query flushes what waits")
        storage.runAll()
        #expect(try storage.stores.archive.count(for: "juliet") == 4)
    }

    @Test func nothingIsNumberedOrQueuedBeforeTheLastSequenceIsLoaded() throws {
        let storage = HeldStorage()
        try storesWithAccounts(storage)
        let writer = ArchiveWriter()
        #expect(writer.append(try job("early", to: "juliet"), on: loop, storage: storage, log: log) == nil)
        loop.advance(by: ArchiveWriter.gatheringTime)
        #expect(storage.jobs.isEmpty)
        writer.resume(after: 0)
        #expect(writer.append(try job("late", to: "juliet"), on: loop, storage: storage, log: log)?.firstSequence == ArchiveQueue<ArchiveWriter.Job>.restartGap + 1)
        loop.advance(by: ArchiveWriter.gatheringTime)
        storage.runAll()
        #expect(try storage.stores.archive.count(for: "juliet") == 1)
    }

    @Test func onlyTheSendersCopyIsKeptForAMessageToNobodyAndRosterRulesAreChecked() throws {
        let storage = HeldStorage()
        try storesWithAccounts(storage)
        _ = try storage.stores.roster.put(RosterItem(contact: "romeo@localhost"), of: "juliet")
        let writer = ArchiveWriter()
        writer.resume(after: 0)
        writer.append(try job("lost", to: "nobody"), on: loop, storage: storage, log: log)
        writer.append(try job("contact", to: "juliet", rosterOnly: true), on: loop, storage: storage, log: log)
        writer.append(try job("stranger", to: "nurse", rosterOnly: true), on: loop, storage: storage, log: log)
        loop.advance(by: ArchiveWriter.gatheringTime)
        storage.runAll()
        let romeo = try storage.stores.archive.query(ArchiveQuery(max: 10), for: "romeo").items
        #expect(romeo.map(\.peer.bare) == ["nobody@localhost", "juliet@localhost", "nurse@localhost"])
        #expect(try storage.stores.archive.count(for: "juliet") == 1)
        #expect(try storage.stores.archive.count(for: "nurse") == 0, "romeo is not in the nurse's roster")
    }

    @Test func aFullBatchIsQueuedWithoutWaitingForTheTimer() throws {
        let storage = HeldStorage()
        try storesWithAccounts(storage)
        let writer = ArchiveWriter()
        writer.resume(after: 0)
        let batch = ArchiveQueue<ArchiveWriter.Job>.batchSize
        for number in 1..<batch {
            writer.append(try job("m\(number)", to: "juliet"), on: loop, storage: storage, log: log)
        }
        #expect(storage.jobs.isEmpty)
        #expect(loop.pendingTimers == 1, "one timer for the whole gathering")
        writer.append(try job("last", to: "juliet"), on: loop, storage: storage, log: log)
        #expect(storage.jobs.count == 1, "the batch is full")
        storage.runAll()
        #expect(try storage.stores.archive.count(for: "juliet") == batch)
        loop.advance(by: ArchiveWriter.gatheringTime)
        #expect(storage.jobs.isEmpty, "the timer finds nothing left to write")
    }

    @Test func stoppingTheServerWritesWhatWaits() throws {
        let storage = HeldStorage()
        try storesWithAccounts(storage)
        let writer = ArchiveWriter()
        writer.resume(after: 0)
        writer.append(try job("bye", to: "juliet"), on: loop, storage: storage, log: log)
        writer.flushNow(storage: storage, log: log)
        storage.runAll()
        #expect(try storage.stores.archive.count(for: "juliet") == 1)
    }
}
