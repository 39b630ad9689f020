import Synchronization
import XMPPCore
import XMPPNet
import XMPPStorage

/// Archive writes waiting for the storage thread, numbered from one
/// counter: the group commit of the users' archives (`ArchiveWriter`) and
/// of the rooms' (`MUCArchive`).
///
/// Routing appends a job, numbered at once so that the delivered stanza can
/// carry its id, and, when no flush is queued yet, queues one (at once, or
/// after a short gathering time with `flushBatched`); the flush takes every
/// job that arrived by the time it runs and writes them in one
/// transaction. Sequences follow the queue's order, which is the order the
/// flush writes in.
///
/// Shared by every loop, so guarded by a mutex held only to append or take.
final class ArchiveQueue<Job: Sendable>: Sendable {
    private struct State {
        var jobs: [Job] = []
        var flushQueued = false
        /// Whether a `flushBatched` timer will queue a flush.
        var timerArmed = false
        /// The next sequence to give out; 0 until `resume(after:)`, and
        /// then `append` refuses jobs.
        var nextSequence: Int64 = 0
    }

    /// How far past the last stored sequence numbering resumes at start:
    /// more than the writes a crash can lose, so that an id handed out
    /// with a lost message is never given to another.
    static var restartGap: Int64 { 1 << 20 }

    /// Jobs waiting beyond which a sender waits for them (backpressure).
    static var highWaterMark: Int { 5000 }

    /// Jobs waiting at which `flushBatched` queues a flush without waiting
    /// for its timer.
    static var batchSize: Int { 1000 }

    private let state = Mutex(State())

    /// Starts numbering above `last`, the store's last sequence; called
    /// once, when the archive's state has loaded at start.
    func resume(after last: Int64) {
        state.withLock { $0.nextSequence = last + Self.restartGap + 1 }
    }

    /// Gives the job `make` builds `count` consecutive sequences, the first
    /// of which `make` gets, and queues it.
    /// - Returns: The first sequence and how many jobs wait, this one
    ///   included; `nil`, queuing nothing, before `resume(after:)`, since a
    ///   sequence given out then could repeat one already stored.
    func append(count: Int, _ make: (Int64) -> Job) -> (firstSequence: Int64, waiting: Int)? {
        state.withLock { state in
            guard state.nextSequence > 0 else { return nil }
            let first = state.nextSequence
            state.nextSequence += Int64(count)
            state.jobs.append(make(first))
            return (first, state.jobs.count)
        }
    }

    /// Queues `flush` on `storage` unless one is queued already or nothing
    /// waits; a failure is logged, its jobs lost.
    /// - Returns: How many jobs wait.
    @discardableResult
    func flushSoon(
        storage: any StorageJobs, log: Logger, _ flush: @escaping @Sendable (Stores) throws -> Void
    ) -> Int {
        let (needed, waiting) = state.withLock { state in
            defer { if !state.jobs.isEmpty { state.flushQueued = true } }
            return (!state.flushQueued && !state.jobs.isEmpty, state.jobs.count)
        }
        if needed {
            storage.submit(flush) { result in
                if case .failure(let error) = result { log.error("archive write failed, messages lost: \(error)") }
            }
        }
        return waiting
    }

    /// Like `flushSoon`, but lets jobs gather first, so that one
    /// transaction writes many of them: a timer on `loop` queues the flush
    /// `delay` after the first job that found none armed, or an append that
    /// finds `batchSize` jobs waiting queues it at once. A transaction's
    /// cost grows with the pages it touches (a leaf of each archive that
    /// gets a message, written to the WAL at every commit) far more than
    /// with its rows, so a few large ones cost much less than many small
    /// ones. Call on `loop`.
    /// - Returns: How many jobs wait.
    @discardableResult
    func flushBatched(
        on loop: any Loop, within delay: Duration, storage: any StorageJobs, log: Logger,
        _ flush: @escaping @Sendable (Stores) throws -> Void
    ) -> Int {
        let (now, arm, waiting) = state.withLock { state in
            let idle = !state.flushQueued && !state.jobs.isEmpty
            let now = idle && state.jobs.count >= Self.batchSize
            let arm = idle && !now && !state.timerArmed
            if arm { state.timerArmed = true }
            return (now, arm, state.jobs.count)
        }
        if now {
            flushSoon(storage: storage, log: log, flush)
        } else if arm {
            _ = loop.scheduleTimer(after: delay) { [self] in
                state.withLock { $0.timerArmed = false }
                flushSoon(storage: storage, log: log, flush)
            }
        }
        return waiting
    }

    /// Takes every waiting job, for a flush on the storage thread.
    func take() -> [Job] {
        state.withLock { state in
            defer {
                state.jobs = []
                state.flushQueued = false
            }
            return state.jobs
        }
    }
}
