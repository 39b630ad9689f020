/// Counts events per key (an address block, an account) in fixed windows
/// of one `period`, in a table of at most `capacity` keys with amortized
/// O(1) upkeep per call, however many keys a flood brings.
///
/// All windows last the same period, so they end in the order they began:
/// a queue of window starts, oldest first, tells which windows have ended
/// without scanning the table. When the table is full, the oldest window is
/// forgotten to make room. That only lets its key start counting afresh,
/// whereas refusing new keys would let a flood of addresses throttle
/// everyone else.
///
/// A value without locking: `AddressThrottle` and `LoginThrottle` keep
/// theirs inside a `Mutex`.
struct ThrottleWindows {
    /// The events of one key since `start`.
    struct Window {
        /// When the window began; it ends one period later.
        let start: ContinuousClock.Instant
        var count = 0
        /// For a full window: the earliest time at which the next event
        /// past the limit may go ahead (`LoginThrottle` spaces login
        /// attempts past the limit).
        var nextSlot: ContinuousClock.Instant?
    }

    /// The number of events allowed per key, and the window length.
    let limit: ServerConfig.Throttle
    /// The most keys kept at once.
    let capacity: Int
    private var windows: [String: Window] = [:]
    /// Every window begun and not yet dropped from the front, oldest first;
    /// an entry whose key was reset or started again no longer matches the
    /// table and is skipped.
    private var starts: [(key: String, start: ContinuousClock.Instant)] = []
    /// The index of the oldest entry of `starts` still in use.
    private var head = 0

    /// Creates an empty table for `limit`, holding at most `capacity` keys.
    init(_ limit: ServerConfig.Throttle, capacity: Int) {
        precondition(capacity > 0, "a throttle table needs room for one key")
        self.limit = limit
        self.capacity = capacity
    }

    /// The live window of `key`, after dropping the windows that ended.
    mutating func window(of key: String, now: ContinuousClock.Instant) -> Window? {
        dropEnded(now: now)
        return windows[key]
    }

    /// Whether `key` has had `limit.count` events in its window.
    mutating func isFull(_ key: String, now: ContinuousClock.Instant) -> Bool {
        (window(of: key, now: now)?.count ?? 0) >= limit.count
    }

    /// How long until the window of `key` ends and its count starts over;
    /// nil when it has no window.
    mutating func timeUntilWindowEnds(for key: String, now: ContinuousClock.Instant) -> Duration? {
        window(of: key, now: now).map { now.duration(to: $0.start + limit.period) }
    }

    /// Counts one event for `key`, beginning a window if it has none.
    mutating func add(_ key: String, now: ContinuousClock.Instant) {
        dropEnded(now: now)
        if windows[key] == nil {
            while starts.count - head >= capacity { dropOldest() }
            windows[key] = Window(start: now)
            starts.append((key, now))
        }
        windows[key]!.count += 1
    }

    /// Sets when the next event past the limit may go ahead for `key`,
    /// which must have a window.
    mutating func setNextSlot(_ slot: ContinuousClock.Instant, for key: String) {
        precondition(windows[key] != nil, "only a counted key has slots")
        windows[key]!.nextSlot = slot
    }

    /// Forgets the events of `key`.
    mutating func remove(_ key: String) {
        windows[key] = nil
    }

    private mutating func dropEnded(now: ContinuousClock.Instant) {
        while head < starts.count, starts[head].start + limit.period <= now { dropOldest() }
    }

    /// Drops the oldest entry of `starts` and its window, if still current;
    /// compacts the queue once most of it is used up, so each entry is
    /// moved at most once on average.
    private mutating func dropOldest() {
        let (key, start) = starts[head]
        if windows[key]?.start == start { windows[key] = nil }
        head += 1
        if head >= 64, head * 2 >= starts.count {
            starts.removeFirst(head)
            head = 0
        }
    }
}
