import Foundation

/// A dedicated thread that owns a database connection, and whatever is
/// built on it (the `Context`), and runs storage jobs one at a time, in the
/// order they were submitted.
///
/// Callers never touch SQLite themselves: they `submit` a job and get the
/// result in a completion, which runs on the storage thread and hands the
/// result on (an event loop re-posts it to itself; `async` callers use
/// `perform`). The server runs its stores on one, the client kit its local
/// store on another.
///
/// This is one connection on one serial thread. SQLite's threading
/// documentation (https://sqlite.org/threadsafe.html) allows it for a
/// connection opened with `SQLITE_OPEN_NOMUTEX`: "In this mode, SQLite can be
/// safely used by multiple threads provided that no single database
/// connection nor any object derived from database connection, such as a
/// prepared statement, is used in two or more threads at the same time."
/// Here the connection and its statements are even created, used and closed
/// on the one thread.
///
/// Group commit: jobs submitted with `submitGrouped` that wait next to each
/// other run in one transaction, each in a savepoint of its own, and their
/// completions are called once that transaction has committed. Durable
/// small writes from many callers then share one commit, one sync of the
/// journal, instead of one each.
public final class StorageQueue<Context>: Sendable {
    private let jobs: JobQueue<Context>
    private let database: @Sendable (Context) -> Database?

    /// Starts the storage thread and builds the context on it.
    ///
    /// - Parameters:
    ///   - name: The thread's name, for debuggers.
    ///   - open: Opens the database, migrates it and returns the context;
    ///     it runs on the new thread, so the connection never changes threads.
    ///   - close: Closes the context's database once the last job has run,
    ///     on the storage thread.
    ///   - database: The context's database, in which `submitGrouped`
    ///     commits its groups; without one (the default) a grouped job runs
    ///     and completes alone, as a submitted one does.
    /// - Throws: What `open` throws; the thread has then ended.
    public init(
        name: String, open: @escaping @Sendable () throws -> Context,
        close: @escaping @Sendable (Context) -> Void,
        database: @escaping @Sendable (Context) -> Database? = { _ in nil }
    ) throws {
        let jobs = JobQueue<Context>(database: database)
        let thread = Thread { jobs.run(open: open, close: close) }
        thread.name = name
        jobs.start(thread)
        try jobs.waitUntilStarted()
        self.jobs = jobs
        self.database = database
    }

    /// Lets the thread finish the queued jobs and close the database, without waiting.
    deinit {
        jobs.requestStop()
    }

    /// Whether the caller runs on this queue's storage thread.
    public var isStorageThread: Bool {
        jobs.isStorageThread
    }

    /// How many jobs wait or run now, and how long finished ones took.
    public var statistics: StorageQueueStatistics {
        jobs.statistics
    }

    /// Queues `job`; when it has run, `completion` is called with its result
    /// on the storage thread.
    ///
    /// Jobs run one at a time in submission order. After `shutdown()`,
    /// `completion` is called at once on the caller's thread with
    /// `StorageQueueError.shutDown`.
    ///
    /// - Parameters:
    ///   - job: The work; it gets the context and must not keep it.
    ///   - completion: Receives the result or the error `job` threw; it should
    ///     only hand the result on (to an event loop), because the next job
    ///     waits for it.
    public func submit<Value: Sendable>(
        _ job: @escaping @Sendable (Context) throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        let accepted = jobs.enqueue(.alone { context in
            completion(Result { try job(context) })
        })
        if !accepted {
            completion(.failure(StorageQueueError.shutDown))
        }
    }

    /// Queues `job` to share one transaction, and one commit, with the
    /// grouped jobs queued next to it; `completion` is called on the storage
    /// thread once that commit has returned, so a result it reports is
    /// durable as far as the connection's `synchronous` setting makes
    /// commits durable.
    ///
    /// The job runs in a savepoint: if it throws, its own writes are rolled
    /// back and the group's others stay. If the commit fails, every job of
    /// the group gets its error; if a job's error makes SQLite roll back the
    /// whole transaction (`SQLITE_FULL`, `SQLITE_IOERR`…), the jobs before it
    /// get `StorageQueueError.rolledBack`. Jobs still run in submission
    /// order, and a job submitted with `submit` ends the group before it.
    ///
    /// - Parameters:
    ///   - job: Small writes (and the reads they need) that may share a
    ///     transaction: it must not begin or end transactions of its own
    ///     other than through `Database.transaction`, which nests.
    ///   - completion: Receives the result, or the error `job` or the
    ///     commit threw; it should only hand the result on.
    public func submitGrouped<Value: Sendable>(
        _ job: @escaping @Sendable (Context) throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        let database = self.database
        let accepted = jobs.enqueue(.grouped { context in
            let result = Result {
                guard let database = database(context) else { return try job(context) }
                // Inside the group's transaction, this is the job's savepoint.
                return try database.transaction { try job(context) }
            }
            return { groupError in completion(groupError.map { .failure($0) } ?? result) }
        })
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
        _ job: @escaping @Sendable (Context) throws -> Value
    ) throws -> Value {
        precondition(!isStorageThread, "StorageQueue.perform called on the storage thread")
        let outcome = Outcome<Value>()
        submit(job) { result in outcome.deliver(result) }
        return try outcome.wait().get()
    }

    /// Runs `job` on the storage thread and suspends the calling task,
    /// without blocking its thread, until the result is there; for `async`
    /// code such as an actor that keeps its data in the database.
    ///
    /// - Throws: What `job` throws, or `StorageQueueError.shutDown`.
    public func perform<Value: Sendable>(
        _ job: @escaping @Sendable (Context) throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            submit(job) { result in continuation.resume(with: result) }
        }
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
    /// The job's writes were undone with its group's transaction, which a
    /// later job of the group made SQLite roll back (see `submitGrouped`).
    case rolledBack
}

/// A storage queue's load, for monitoring: its depth now, and the latency
/// of finished jobs (from `submit` until the job and its completion have
/// returned) in fixed buckets.
public struct StorageQueueStatistics: Sendable {
    /// The latency buckets' inclusive upper bounds, in nanoseconds: 100 µs
    /// to 5 s; a last bucket takes longer jobs.
    public static let latencyBounds: [Int64] = [
        100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000,
        100_000_000, 250_000_000, 500_000_000, 1_000_000_000, 2_500_000_000, 5_000_000_000,
    ]

    /// Jobs submitted and not finished, the running one included (the
    /// jobs of a batch count as finished when its last one has returned).
    public var depth = 0
    /// Finished jobs per latency bucket: `latencyBounds.count + 1` slots.
    public var latencyCounts = [UInt64](repeating: 0, count: latencyBounds.count + 1)
    /// The latencies of finished jobs, summed, in nanoseconds.
    public var latencySum: Int64 = 0

    /// Nothing submitted, nothing finished.
    public init() {}

    /// Counts a finished job that took `nanoseconds`.
    mutating func recordFinished(nanoseconds: Int64) {
        depth -= 1
        let bucket = Self.latencyBounds.firstIndex { nanoseconds <= $0 } ?? Self.latencyBounds.count
        latencyCounts[bucket] &+= 1
        latencySum &+= nanoseconds
    }
}

/// The job list and thread state shared by a `StorageQueue` and its thread.
///
/// `@unchecked Sendable` because every stored `var` is read and written only
/// between `condition.lock()` and `condition.unlock()`, and the context never
/// leaves `run(open:close:)`, which executes on the storage thread alone.
/// Several threads can wait on `condition` (the storage thread for jobs,
/// callers of `shutdown()` for the end), so every change wakes them all.
private final class JobQueue<Context>: @unchecked Sendable {
    /// A queued job: run alone, or in a group that commits together, where
    /// it returns what to call once the group has committed (with `nil`) or
    /// failed (with the group's error).
    enum Job {
        case alone(@Sendable (Context) -> Void)
        case grouped(@Sendable (Context) -> (_ groupError: (any Error)?) -> Void)

        var isGrouped: Bool {
            if case .grouped = self { true } else { false }
        }
    }

    /// A job and when it was submitted.
    typealias Entry = (job: Job, submitted: ContinuousClock.Instant)

    /// How long, in seconds, a group waits at most for the jobs it expects
    /// (see `nextBatch`): a fraction of a sync of the journal on a disk.
    static var groupFillWait: TimeInterval { 0.001 }

    private enum Phase {
        case starting, running, stopping, stopped
    }

    private let condition = NSCondition()
    /// The jobs waiting, with when each was submitted.
    private var jobs: [Entry] = []
    private var counts = StorageQueueStatistics()
    private var phase = Phase.starting
    private var startupError: (any Error)?
    private var thread: Thread?
    private let database: @Sendable (Context) -> Database?

    init(database: @escaping @Sendable (Context) -> Database?) {
        self.database = database
    }

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
    func enqueue(_ job: Job) -> Bool {
        locked {
            guard phase == .starting || phase == .running else { return false }
            jobs.append((job, .now))
            counts.depth += 1
            condition.broadcast()
            return true
        }
    }

    var statistics: StorageQueueStatistics {
        locked { counts }
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

    /// The storage thread's body: build the context, run jobs until stopped
    /// and drained, close the database.
    func run(open: () throws -> Context, close: (Context) -> Void) {
        let context: Context
        do {
            context = try open()
        } catch {
            finish(.stopped, error: error)
            return
        }
        finish(.running, error: nil)
        var lastGroupSize = 0
        // Take every queued job at once: one lock round trip per batch.
        while let batch = nextBatch(expectingGroupOf: lastGroupSize) {
            var latencies: [Int64] = []
            latencies.reserveCapacity(batch.count)
            var next = 0
            while next < batch.count {
                let end: Int
                switch batch[next].job {
                case .alone(let job):
                    job(context)
                    end = next + 1
                case .grouped(let job):
                    if let database = database(context) {
                        end = runGroup(of: batch, from: next, on: context, in: database)
                    } else {
                        job(context)(nil)
                        end = next + 1
                    }
                    lastGroupSize = end - next
                }
                let now = ContinuousClock.now
                for (_, submitted) in batch[next..<end] {
                    let (seconds, attoseconds) = (now - submitted).components
                    latencies.append(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                }
                next = end
            }
            locked { for latency in latencies { counts.recordFinished(nanoseconds: latency) } }
        }
        close(context)
        finish(.stopped, error: nil)
    }

    /// Runs the grouped jobs of `batch` from `start` on, up to the first job
    /// that runs alone, in one transaction of `database`, then calls their
    /// completions; returns where it stopped.
    ///
    /// It stops early, after the job whose error made SQLite roll the
    /// transaction back: the jobs after it form the next group.
    private func runGroup(
        of batch: [Entry], from start: Int, on context: Context, in database: Database
    ) -> Int {
        var completions: [(_ groupError: (any Error)?) -> Void] = []
        var end = start
        let groupError: (any Error)?
        do {
            try database.transaction {
                while end < batch.count, case .grouped(let job) = batch[end].job {
                    completions.append(job(context))
                    end += 1
                    guard database.isInTransaction else { throw StorageQueueError.rolledBack }
                }
            }
            groupError = nil
        } catch {
            groupError = error
        }
        // The transaction did not even begin (a `SQLITE_BUSY`): the first
        // job runs alone and reports what it meets, so the queue moves on.
        if case .grouped(let job) = batch[start].job, completions.isEmpty {
            job(context)(nil)
            return start + 1
        }
        for (index, completion) in completions.enumerated() {
            // The job that lost the transaction already reports its own error.
            let lost = groupError as? StorageQueueError == .rolledBack && index == completions.count - 1
            completion(lost ? nil : groupError)
        }
        return end
    }

    private func finish(_ newPhase: Phase, error: (any Error)?) {
        locked {
            phase = newPhase
            startupError = error
            condition.broadcast()
        }
    }

    /// Waits for jobs; returns `nil` once stopping with nothing left to run.
    ///
    /// When only grouped jobs wait, fewer than `expected` (the size of the
    /// last group), it waits up to `groupFillWait` longer for as many: the
    /// callers of the last group submit their next jobs as its completions
    /// reach them, and without the wait the first of them would commit
    /// alone while the others queue behind its sync.
    private func nextBatch(expectingGroupOf expected: Int) -> [Entry]? {
        locked {
            while jobs.isEmpty && phase == .running { condition.wait() }
            let deadline = Date(timeIntervalSinceNow: Self.groupFillWait)
            while jobs.count < expected, phase == .running, jobs.allSatisfy({ $0.job.isGrouped }),
                condition.wait(until: deadline)
            {}
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
