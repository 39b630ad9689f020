import Foundation
import XMPPCore

/// The store objects of one storage thread.
///
/// Not `Sendable`: the SQLite stores share one connection, which only the
/// storage thread may use. Jobs receive it as a parameter and must not let
/// it, or anything it returns by reference, escape.
public final class Stores {
    /// The accounts.
    public let accounts: any AccountStore
    /// The rosters and subscription states.
    public let roster: any RosterStore
    /// The messages kept for users who were offline.
    public let offline: any OfflineStore
    /// The users' message archives and archiving preferences.
    public let archive: any ArchiveStore
    /// The connection the SQLite stores share, so that a job can group
    /// several store calls into one transaction; `nil` for in-memory stores.
    public let database: Database?

    /// Bundles the SQLite stores over `database`, which must be migrated.
    public init(database: Database) {
        self.database = database
        self.accounts = SQLiteAccountStore(database: database)
        self.roster = SQLiteRosterStore(database: database)
        self.offline = SQLiteOfflineStore(database: database)
        self.archive = SQLiteArchiveStore(database: database)
    }

    /// Bundles `accounts`, a store that needs no database such as
    /// `InMemoryAccountStore`, with an `InMemoryRosterStore`, an
    /// `InMemoryOfflineStore` and an `InMemoryArchiveStore` for its users.
    ///
    /// `self.accounts` forwards to `accounts`, and when it deletes an
    /// account it also deletes the account's roster, messages and archive,
    /// as `ON DELETE CASCADE` does in SQLite. Delete accounts through it,
    /// not through `accounts` directly.
    public init(accounts: any AccountStore) {
        let roster = InMemoryRosterStore(accounts: accounts)
        let offline = InMemoryOfflineStore(accounts: accounts)
        let archive = InMemoryArchiveStore(accounts: accounts)
        self.database = nil
        self.accounts = CascadingAccountStore(base: accounts, roster: roster, offline: offline, archive: archive)
        self.roster = roster
        self.offline = offline
        self.archive = archive
    }

    /// Runs `body` in one transaction when the stores share a database, so
    /// that a job's writes commit together; in-memory stores just run it.
    ///
    /// - Parameter durable: Whether the commit waits for the disk (the
    ///   connection's `synchronous` setting); `false` commits with
    ///   `.normal`, for writes a power failure may take back.
    /// - Throws: What `body` throws, or `DatabaseError`.
    public func inTransaction<Result>(durable: Bool = true, _ body: () throws -> Result) throws -> Result {
        guard let database else { return try body() }
        return try durable ? database.transaction(body) : database.transaction(synchronous: .normal, body)
    }
}

/// An account store that, after deleting an account, deletes its data from
/// the in-memory stores, which cannot see the deletion themselves.
private final class CascadingAccountStore: AccountStore {
    private let base: any AccountStore
    private let roster: InMemoryRosterStore
    private let offline: InMemoryOfflineStore
    private let archive: InMemoryArchiveStore

    init(
        base: any AccountStore, roster: InMemoryRosterStore, offline: InMemoryOfflineStore,
        archive: InMemoryArchiveStore
    ) {
        self.base = base
        self.roster = roster
        self.offline = offline
        self.archive = archive
    }

    func deleteAccount(_ username: String) throws -> Bool {
        guard try base.deleteAccount(username) else { return false }
        roster.removeAll(of: username)
        offline.removeAll(for: username)
        archive.removeAll(for: username)
        return true
    }

    func createAccount(_ username: String, credentials: [SCRAMCredentials]) throws -> Bool {
        try base.createAccount(username, credentials: credentials)
    }

    func credentials(of username: String, for hashFunction: HashFunction) throws
        -> SCRAMCredentials?
    {
        try base.credentials(of: username, for: hashFunction)
    }

    func replaceCredentials(of username: String, with credentials: [SCRAMCredentials]) throws
        -> Bool
    {
        try base.replaceCredentials(of: username, with: credentials)
    }

    func accountExists(_ username: String) throws -> Bool {
        try base.accountExists(username)
    }

    func usernames() throws -> [String] {
        try base.usernames()
    }

    func accountCount() throws -> Int {
        try base.accountCount()
    }
}

/// The dedicated thread that owns the database connection and the stores,
/// and runs storage jobs one at a time, in the order they were submitted.
///
/// Event loops never touch SQLite: they `submit` a job and get the result in
/// a completion, which runs on the storage thread and re-posts to the loop.
/// This is one connection on one serial thread. SQLite's threading
/// documentation (https://sqlite.org/threadsafe.html) allows it for a
/// connection opened with `SQLITE_OPEN_NOMUTEX`: "In this mode, SQLite can be
/// safely used by multiple threads provided that no single database
/// connection nor any object derived from database connection, such as a
/// prepared statement, is used in two or more threads at the same time."
/// Here the connection and its statements are even created, used and closed
/// on the one thread.
public final class StorageQueue: Sendable {
    private let jobs: JobQueue

    /// Starts the storage thread and builds the stores on it.
    ///
    /// - Parameter makeStores: Opens the database, migrates it and returns
    ///   the stores; it runs on the new thread, so the connection never
    ///   changes threads.
    /// - Throws: What `makeStores` throws; the thread has then ended.
    public init(makeStores: @escaping @Sendable () throws -> Stores) throws {
        let jobs = JobQueue()
        let thread = Thread { jobs.run(makeStores: makeStores) }
        thread.name = "swiftlet.storage"
        jobs.start(thread)
        try jobs.waitUntilStarted()
        self.jobs = jobs
    }

    /// Lets the thread finish the queued jobs and close the database, without waiting.
    deinit {
        jobs.requestStop()
    }

    /// Whether the caller runs on this queue's storage thread.
    public var isStorageThread: Bool {
        jobs.isStorageThread
    }

    /// Queues `job`; when it has run, `completion` is called with its result
    /// on the storage thread.
    ///
    /// Jobs run one at a time in submission order. After `shutdown()`,
    /// `completion` is called at once on the caller's thread with
    /// `StorageQueueError.shutDown`.
    ///
    /// - Parameters:
    ///   - job: The work; it gets the stores and must not keep them.
    ///   - completion: Receives the result or the error `job` threw; it should
    ///     only hand the result on (to an event loop), because the next job
    ///     waits for it.
    public func submit<Value: Sendable>(
        _ job: @escaping @Sendable (Stores) throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        let accepted = jobs.enqueue { stores in
            completion(Result { try job(stores) })
        }
        if !accepted {
            completion(.failure(StorageQueueError.shutDown))
        }
    }

    /// Runs `job` on the storage thread and waits for its result; for admin
    /// commands and tests, never for an event loop.
    ///
    /// - Precondition: The caller is not the storage thread, which would
    ///   wait for itself forever.
    /// - Throws: What `job` throws, or `StorageQueueError.shutDown`.
    public func perform<Value: Sendable>(
        _ job: @escaping @Sendable (Stores) throws -> Value
    ) throws -> Value {
        precondition(!isStorageThread, "StorageQueue.perform called on the storage thread")
        let outcome = Outcome<Value>()
        submit(job) { result in outcome.deliver(result) }
        return try outcome.wait().get()
    }

    /// Stops accepting jobs, waits until the queued ones have run, then
    /// closes the database and ends the thread. Calling it again does nothing.
    ///
    /// - Precondition: The caller is not the storage thread.
    public func shutdown() {
        precondition(!isStorageThread, "StorageQueue.shutdown called on the storage thread")
        jobs.requestStop()
        jobs.waitUntilStopped()
    }
}

/// Why a storage job did not run.
public enum StorageQueueError: Error, Sendable, Hashable {
    /// The job was submitted after `StorageQueue.shutdown()`.
    case shutDown
}

/// The job list and thread state shared by a `StorageQueue` and its thread.
///
/// `@unchecked Sendable` because every stored `var` is read and written only
/// between `condition.lock()` and `condition.unlock()`, and the stores never
/// leave `run(makeStores:)`, which executes on the storage thread alone.
/// Several threads can wait on `condition` (the storage thread for jobs,
/// callers of `shutdown()` for the end), so every change wakes them all.
private final class JobQueue: @unchecked Sendable {
    typealias Job = @Sendable (Stores) -> Void

    private enum Phase {
        case starting, running, stopping, stopped
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var phase = Phase.starting
    private var startupError: (any Error)?
    private var thread: Thread?

    private func locked<Result>(_ body: () -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    func start(_ thread: Thread) {
        locked { self.thread = thread }
        thread.start()
    }

    var isStorageThread: Bool {
        locked { thread.map { $0 === Thread.current } ?? false }
    }

    /// Adds a job unless the queue is stopping; returns whether it was added.
    func enqueue(_ job: @escaping Job) -> Bool {
        locked {
            guard phase == .starting || phase == .running else { return false }
            jobs.append(job)
            condition.broadcast()
            return true
        }
    }

    func requestStop() {
        locked {
            guard phase == .running else { return }
            phase = .stopping
            condition.broadcast()
        }
    }

    func waitUntilStarted() throws {
        try locked {
            while phase == .starting { condition.wait() }
            return Result { if let startupError { throw startupError } }
        }.get()
    }

    func waitUntilStopped() {
        locked {
            while phase != .stopped { condition.wait() }
        }
    }

    /// The storage thread's body: build the stores, run jobs until stopped
    /// and drained, close the database.
    func run(makeStores: () throws -> Stores) {
        let stores: Stores
        do {
            stores = try makeStores()
        } catch {
            finish(.stopped, error: error)
            return
        }
        finish(.running, error: nil)
        // Take every queued job at once: one lock round trip per batch.
        while let batch = nextBatch() {
            for job in batch { job(stores) }
        }
        stores.database?.close()
        finish(.stopped, error: nil)
    }

    private func finish(_ newPhase: Phase, error: (any Error)?) {
        locked {
            phase = newPhase
            startupError = error
            condition.broadcast()
        }
    }

    /// Waits for jobs; returns `nil` once stopping with nothing left to run.
    private func nextBatch() -> [Job]? {
        locked {
            while jobs.isEmpty && phase == .running { condition.wait() }
            guard !jobs.isEmpty else { return nil }
            defer { jobs = [] }
            return jobs
        }
    }
}

/// A result handed from the storage thread to a thread blocked in `perform`.
///
/// `@unchecked Sendable` because `result` is only touched with `condition`
/// locked.
private final class Outcome<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Value, any Error>?

    func deliver(_ result: Result<Value, any Error>) {
        condition.lock()
        self.result = result
        condition.signal()
        condition.unlock()
    }

    func wait() -> Result<Value, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return result }
            condition.wait()
        }
    }
}
