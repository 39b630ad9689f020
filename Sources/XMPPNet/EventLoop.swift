#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Something registered with a loop for readiness events: a listener or a
/// connection. Called only on the loop's thread.
protocol Selectable: AnyObject {
    /// The descriptor is ready as described.
    func handle(_ events: ReadinessEvents)
    /// The loop is stopping: release the descriptor and tell the owner.
    func loopWillStop()
}

/// One thread that waits for socket readiness, timers and posted work, and
/// runs the handlers of everything registered with it: the epoll
/// implementation of `Loop`.
///
/// Everything a loop owns (listeners, connections, timers, sessions built on
/// them) is touched only on the loop's thread, so the hot path takes no lock.
/// Another thread hands work over with `execute(_:)`, which takes a lock and
/// wakes the loop through an eventfd. A server runs one loop per core and
/// gives each connection to one of them.
///
/// ```swift
/// let loop = try EventLoop.start(name: "net-0")
/// loop.execute {
///     let listener = try? TCPListener(address: SocketAddress(ip: "127.0.0.1", port: 5222)!, on: loop) { connection in
///         connection.handler = Session(connection)
///     }
/// }
/// ```
///
/// `@unchecked Sendable`, and why that holds:
/// - `lock` guards `queue`, `wakeupPending`, `stopRequested`, `hasStarted`
///   and `thread`; no code reads or writes them without it.
/// - `selector` and `readBuffer` are set in `init` and never replaced.
///   From other threads only `selector.wake()` is called, which writes to an
///   eventfd that lives as long as the loop.
/// - Every other stored property (`registrations`, `running`, the timer
///   heap) is used only by `run()` on the loop's thread or by methods that
///   begin with `assertInLoop()`, a precondition checked in release builds.
public final class EventLoop: Loop, @unchecked Sendable {
    // Shared with other threads, under `lock`.
    private let lock = Lock()
    private var queue: [@Sendable () -> Void] = []
    private var wakeupPending = false
    private var stopRequested = false
    private var hasStarted = false
    private var thread: pthread_t?

    // Immutable after init.
    private let selector: Selector
    /// The read buffer all of this loop's connections share: a handler sees
    /// the bytes only during `didRead`, and no read happens inside another,
    /// so one 64 KiB buffer per loop replaces an allocation per read.
    let readBuffer: UnsafeMutableRawBufferPointer

    // Loop thread only.
    private struct Registration {
        let id: UInt32
        let owner: any Selectable
    }
    /// Indexed by descriptor: descriptors are small integers, reused lowest first.
    private var registrations: [Registration?] = []
    private var nextRegistrationID: UInt32 = 1
    /// The batch of posted work being run; swapped with `queue` so both
    /// arrays keep their capacity and a batch allocates nothing.
    private var running: [@Sendable () -> Void] = []
    /// Pending timers; see EventLoop+Timers.swift.
    var timers = TimerHeap()
    var nextTimerSequence: UInt64 = 0
    /// Whether a heap trim is scheduled; see EventLoop+HeapTrim.swift.
    var heapTrimScheduled = false

    /// Creates a loop that is not yet running; call `run()` on the thread
    /// that should own it, or use `start(name:)`.
    /// - Throws: `IOError` if the epoll instance or eventfd cannot be created
    ///   (for example `EMFILE`).
    public init() throws(IOError) {
        selector = try Selector()
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Creates a loop and runs it on a new thread named `name` until `stop()`.
    /// - Throws: `IOError` if the loop or the thread cannot be created.
    public static func start(name: String) throws(IOError) -> EventLoop {
        let loop = try EventLoop()
        let thread = try Sys.startThread(name: name) { loop.run() }
        loop.lock.withLock { loop.thread = thread }
        return loop
    }

    /// Runs the loop on the calling thread until `stop()` is called. A loop
    /// runs once; when it stops, its listeners and connections are closed
    /// (their handlers see `ECANCELED`), its timers dropped, and work posted
    /// after the stop is discarded without running.
    public func run() {
        precondition(EventLoop.currentThreadLoop == nil, "this thread already runs an EventLoop")
        lock.withLock {
            precondition(!hasStarted, "an EventLoop runs only once")
            hasStarted = true
        }
        EventLoop.setCurrentThreadLoop(Unmanaged.passUnretained(self).toOpaque())
        defer { EventLoop.setCurrentThreadLoop(nil) }

        var stopping = false
        while !stopping {
            do throws(IOError) {
                try selector.wait(timeout: timeoutMilliseconds()) { fd, id, events in
                    guard Int(fd) < registrations.count, let registration = registrations[Int(fd)],
                        registration.id == id
                    else { return }  // stale: the descriptor was closed (and maybe reused) meanwhile
                    registration.owner.handle(events)
                }
            } catch {
                preconditionFailure("EventLoop: \(error)")  // EBADF/EINVAL: a bug, not an input
            }
            fireDueTimers()
            stopping = runPostedWork()
        }
        for owner in registrations.compactMap({ $0?.owner }) { owner.loopWillStop() }
        timers.removeAll()
        lock.withLock { queue.removeAll() }
    }

    /// Runs `work` on the loop's thread soon, after work posted before it.
    /// Safe from any thread; wake-ups are coalesced, so posting many items
    /// costs one eventfd write per loop iteration.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        let mustWake = lock.withLock {
            queue.append(work)
            defer { wakeupPending = true }
            return !wakeupPending
        }
        if mustWake { selector.wake() }
    }

    /// Asks the loop to stop after its current iteration. Safe from any thread.
    public func stop() {
        lock.withLock { stopRequested = true }
        selector.wake()
    }

    /// Stops the loop and waits until the thread from `start(name:)` has
    /// finished. For a loop driven by `run()`, only requests the stop.
    /// Must not be called on the loop itself.
    public func stopAndWait() {
        precondition(!inLoop, "a loop cannot wait for itself to stop")
        stop()
        let thread = lock.withLock {
            defer { self.thread = nil }
            return self.thread
        }
        if let thread { Sys.join(thread) }
    }

    /// True when called on the thread running this loop.
    public var inLoop: Bool {
        EventLoop.currentThreadLoop == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Takes the posted work and runs it; returns whether a stop was requested.
    private func runPostedWork() -> Bool {
        let stopping = lock.withLock {
            swap(&queue, &running)
            wakeupPending = false
            return stopRequested
        }
        for work in running { work() }
        running.removeAll(keepingCapacity: true)
        return stopping
    }

    // MARK: Registrations

    /// Starts watching `fd` for `owner`; returns the registration id that
    /// later calls must present. The loop keeps `owner` alive until `deregister`.
    func register(fd: Int32, interest: Interest, owner: any Selectable) throws(IOError) -> UInt32 {
        assertInLoop()
        let id = nextRegistrationID
        nextRegistrationID = nextRegistrationID == .max ? 1 : nextRegistrationID + 1
        try selector.register(fd: fd, id: id, interest: interest)
        if Int(fd) >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: Int(fd) - registrations.count + 1))
        }
        registrations[Int(fd)] = Registration(id: id, owner: owner)
        return id
    }

    /// Changes what a registered descriptor is watched for.
    func reregister(fd: Int32, id: UInt32, interest: Interest) throws(IOError) {
        assertInLoop()
        try selector.reregister(fd: fd, id: id, interest: interest)
    }

    /// Stops watching `fd` and releases its owner; call before closing `fd`.
    func deregister(fd: Int32, id: UInt32) {
        assertInLoop()
        guard Int(fd) < registrations.count, registrations[Int(fd)]?.id == id else { return }
        selector.deregister(fd: fd)
        registrations[Int(fd)] = nil
    }
}

// MARK: - Current loop

/// A thread-specific slot naming the loop the current thread runs, so
/// `EventLoop.inLoop` is a lock-free read of the caller's own thread.
private let currentLoopKey: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
    return key
}()

extension EventLoop {
    /// The loop running on the calling thread, as an opaque identity.
    /// The corresponding C function is `pthread_getspecific`.
    fileprivate static var currentThreadLoop: UnsafeMutableRawPointer? {
        pthread_getspecific(currentLoopKey)
    }

    /// Marks (or with nil, unmarks) the calling thread as running a loop.
    /// The corresponding C function is `pthread_setspecific`.
    fileprivate static func setCurrentThreadLoop(_ loop: UnsafeMutableRawPointer?) {
        pthread_setspecific(currentLoopKey, loop)
    }
}
