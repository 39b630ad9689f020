// Timers: a min-heap ordered by deadline, consulted for the epoll_wait timeout.
//
// Why a timeout and not a timerfd: the loop already sleeps in epoll_wait, so
// passing the earliest deadline as its timeout costs nothing, whereas a
// timerfd needs a timerfd_settime call whenever the earliest deadline changes
// (every reset of an idle or ack timer) plus a read when it fires. The
// timeout has millisecond resolution, which is ample for XMPP's second-scale
// timers (ping, idle, stream-management acks), and it ports to kqueue as is.

extension EventLoop {
    /// A point on the loop's monotonic clock.
    public typealias Instant = ContinuousClock.Instant

    /// The current time on the loop's monotonic clock, which never goes back
    /// when the wall clock is changed.
    public var now: Instant { ContinuousClock.now }

    /// A one-shot callback scheduled on a loop. Confined to that loop.
    public final class Timer: ScheduledWork {
        /// When the timer fires (or would have fired).
        public let deadline: Instant
        /// Breaks ties between equal deadlines: earlier scheduled fires first.
        let sequence: UInt64
        unowned let loop: EventLoop
        var work: (() -> Void)?
        /// The timer's index in the loop's heap; -1 once fired, cancelled or
        /// dropped by a stopping loop.
        var heapIndex = -1

        init(deadline: Instant, sequence: UInt64, loop: EventLoop, work: @escaping () -> Void) {
            self.deadline = deadline
            self.sequence = sequence
            self.loop = loop
            self.work = work
        }

        /// True until the timer fires or is cancelled.
        public var isPending: Bool { heapIndex >= 0 }

        /// Drops the timer so its work never runs. Does nothing once it has
        /// fired or been cancelled. Call on the loop's thread.
        public func cancel() {
            guard heapIndex >= 0 else { return }
            loop.assertInLoop()
            loop.timers.remove(at: heapIndex)
            work = nil
        }
    }

    /// Runs `work` on this loop once `delay` has passed. Call on the loop's thread.
    /// - Returns: the timer, for `cancel()`.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> Timer {
        schedule(at: now + delay, work)
    }

    /// Runs `work` on this loop once `delay` has passed; `Loop`'s name for
    /// `schedule(after:_:)`. Call on the loop's thread.
    public func scheduleTimer(after delay: Duration, _ work: @escaping () -> Void) -> any ScheduledWork {
        schedule(after: delay, work)
    }

    /// Runs `work` on this loop at `deadline` (at once, in the next
    /// iteration, if it has passed). Call on the loop's thread.
    /// - Returns: the timer, for `cancel()`.
    @discardableResult
    public func schedule(at deadline: Instant, _ work: @escaping () -> Void) -> Timer {
        assertInLoop()
        let timer = Timer(deadline: deadline, sequence: nextTimerSequence, loop: self, work: work)
        nextTimerSequence += 1
        timers.insert(timer)
        return timer
    }

    /// Fires the timers that are due, earliest first. A timer scheduled by one
    /// of them waits for the next iteration even if already due, so a timer
    /// that re-arms itself with a zero delay cannot starve I/O.
    func fireDueTimers() {
        guard !timers.isEmpty else { return }
        let now = self.now
        let firstNew = nextTimerSequence
        while let timer = timers.first, timer.deadline <= now, timer.sequence < firstNew {
            timers.remove(at: 0)
            let work = timer.work
            timer.work = nil
            work?()
        }
    }

    /// The epoll_wait timeout for the earliest timer: -1 without timers,
    /// otherwise the milliseconds left, rounded up so the loop does not wake
    /// just before the deadline and spin.
    func timeoutMilliseconds() -> Int32 {
        guard let first = timers.first else { return -1 }
        let left = first.deadline - now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        if seconds >= Int64(Int32.max / 1000) { return Int32.max }
        let perMillisecond: Int64 = 1_000_000_000_000_000
        return Int32(seconds * 1000 + (attoseconds + perMillisecond - 1) / perMillisecond)
    }
}

/// A binary min-heap of timers by (deadline, sequence). Each timer records
/// its index so `cancel()` removes it in O(log n) instead of leaving it
/// behind: idle timers re-armed on every stanza would otherwise pile up.
struct TimerHeap {
    private var items: [EventLoop.Timer] = []

    var first: EventLoop.Timer? { items.first }
    var isEmpty: Bool { items.isEmpty }

    mutating func insert(_ timer: EventLoop.Timer) {
        timer.heapIndex = items.count
        items.append(timer)
        siftUp(items.count - 1)
    }

    mutating func remove(at index: Int) {
        let removed = items[index]
        let last = items.removeLast()
        if index < items.count {
            items[index] = last
            last.heapIndex = index
            if index > 0 && Self.precedes(last, items[(index - 1) / 2]) {
                siftUp(index)
            } else {
                siftDown(index)
            }
        }
        removed.heapIndex = -1
    }

    /// Drops every timer without running it.
    mutating func removeAll() {
        for timer in items {
            timer.heapIndex = -1
            timer.work = nil
        }
        items.removeAll()
    }

    private static func precedes(_ a: EventLoop.Timer, _ b: EventLoop.Timer) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.sequence < b.sequence)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(items[child], items[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { return }
            let right = left + 1
            let child = right < items.count && Self.precedes(items[right], items[left]) ? right : left
            guard Self.precedes(items[child], items[parent]) else { return }
            swapAt(child, parent)
            parent = child
        }
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        items.swapAt(i, j)
        items[i].heapIndex = i
        items[j].heapIndex = j
    }
}
