import Synchronization

/// A clock that stands still until a test moves it. Code under test sleeps
/// on it (a client's reconnect delays, keepalive pings and timeouts, given
/// as `ClientConfiguration.clock`) and the test says when that time has
/// passed, so what happens never depends on how busy the machine is.
public final class ManualClock: Clock, Sendable {
    /// A point on the clock: how far it has been moved since it was made.
    public struct Instant: InstantProtocol {
        /// The time since the clock was made.
        public let offset: Duration

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID = 0
        /// The sleeping tasks by id: when each wakes, and how.
        var sleepers: [Int: (deadline: Instant, wake: CheckedContinuation<Void, any Error>)] = [:]
        /// Tasks waiting for this many sleepers, by id.
        var watchers: [Int: (count: Int, resume: CheckedContinuation<Void, any Error>)] = [:]

        mutating func makeID() -> Int {
            defer { nextID += 1 }
            return nextID
        }

        /// Removes and returns the watchers that enough sleepers satisfy.
        mutating func satisfiedWatchers() -> [CheckedContinuation<Void, any Error>] {
            let satisfied = watchers.filter { $0.value.count <= sleepers.count }
            for id in satisfied.keys { watchers[id] = nil }
            return satisfied.map(\.value.resume)
        }
    }

    private let state = Mutex(State())

    /// A clock at its start, nobody sleeping on it.
    public init() {}

    public var now: Instant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .zero }

    /// Suspends until the clock is moved to `deadline` or past it.
    /// - Throws: `CancellationError` if the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (wake: CheckedContinuation<Void, any Error>) in
                // Cancellation sets the flag before its handler runs, so
                // a sleeper registered here is either seen by the handler
                // or not registered at all.
                let (early, watchers) = state.withLock {
                    state -> (Result<Void, any Error>?, [CheckedContinuation<Void, any Error>]) in
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = (deadline, wake)
                    return (nil, state.satisfiedWatchers())
                }
                if let early { wake.resume(with: early) }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.wake.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration`, waking every task whose deadline
    /// that reaches.
    public func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.wake)
        }
        for wake in due { wake.resume() }
    }

    /// Waits until at least `count` tasks sleep on the clock. A task
    /// decides to sleep before it starts to, so a test that has seen the
    /// decision waits here before moving the clock past the deadline.
    /// - Throws: `CancellationError` if the waiting task is cancelled.
    public func waitForSleepers(_ count: Int = 1) async throws {
        let id = state.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (resume: CheckedContinuation<Void, any Error>) in
                let early = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.sleepers.count >= count { return .success(()) }
                    state.watchers[id] = (count, resume)
                    return nil
                }
                if let early { resume.resume(with: early) }
            }
        } onCancel: {
            state.withLock { $0.watchers.removeValue(forKey: id) }?.resume.resume(throwing: CancellationError())
        }
    }
}
