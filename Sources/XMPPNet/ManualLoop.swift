import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `Loop` with no thread and no I/O, for tests and deterministic hosts:
/// work runs when the owner calls `run()`, and time moves only through
/// `advance(by:)`. Code on it behaves as on an `EventLoop`, but the same
/// inputs always give the same order of events (NIO's `EmbeddedEventLoop`
/// plays this part).
///
/// The "loop thread" is whichever thread created it; `execute` may be
/// called from any thread (a storage thread, say) and is queued.
public final class ManualLoop: Loop, @unchecked Sendable {
    // @unchecked: `timers` and `current` are touched only on the owning
    // thread (every method that uses them asserts it); `queue` is a Mutex.
    private let owner: pthread_t = pthread_self()
    private let queue = Mutex<[@Sendable () -> Void]>([])
    private var timers: [ManualTimer] = []
    private var current: ContinuousClock.Instant = .now

    /// Creates a loop owned by the calling thread, its clock at the present.
    public init() {}

    public var inLoop: Bool { pthread_equal(owner, pthread_self()) != 0 }

    public var now: ContinuousClock.Instant { current }

    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(work) }
    }

    public func scheduleTimer(after delay: Duration, _ work: @escaping () -> Void) -> any ScheduledWork {
        assertInLoop()
        let timer = ManualTimer(deadline: current + delay, work: work)
        timers.append(timer)
        return timer
    }

    /// Runs queued work until none is left (work may queue more).
    public func run() {
        assertInLoop()
        while true {
            let batch = queue.withLock { queue in
                defer { queue.removeAll() }
                return queue
            }
            if batch.isEmpty { return }
            for work in batch { work() }
        }
    }

    /// Moves time forward, firing due timers in deadline order and running
    /// queued work after each.
    public func advance(by duration: Duration) {
        assertInLoop()
        let end = current + duration
        run()
        while let next = timers.filter({ !$0.isCancelled && $0.deadline <= end }).min(by: { $0.deadline < $1.deadline }) {
            current = next.deadline
            timers.removeAll { $0 === next }
            next.fire()
            run()
        }
        timers.removeAll { $0.isCancelled }
        current = end
    }

    /// Timers still pending (not fired, not cancelled).
    public var pendingTimers: Int { timers.filter { !$0.isCancelled }.count }
}

private final class ManualTimer: ScheduledWork {
    let deadline: ContinuousClock.Instant
    private var work: (() -> Void)?

    init(deadline: ContinuousClock.Instant, work: @escaping () -> Void) {
        self.deadline = deadline
        self.work = work
    }

    var isCancelled: Bool { work == nil }

    func cancel() { work = nil }

    func fire() {
        let work = self.work
        self.work = nil
        work?()
    }
}
