/// What code confined to an event loop needs from it: run work on it,
/// schedule timers on it, and tell whether the caller is on it.
///
/// Sessions and connections program against this protocol, not a concrete
/// loop, as NIO's handlers do against NIOCore's `EventLoop`. `EventLoop` is
/// the epoll implementation; `ManualLoop` runs without a thread or I/O, its
/// time moving only when told, for tests and deterministic hosts.
public protocol Loop: AnyObject, Sendable {
    /// Whether the calling thread is this loop's thread.
    var inLoop: Bool { get }
    /// The loop's monotonic clock.
    var now: ContinuousClock.Instant { get }
    /// Runs `work` on the loop soon; callable from any thread.
    func execute(_ work: @escaping @Sendable () -> Void)
    /// Runs `work` on the loop after `delay`; call only on the loop.
    func scheduleTimer(after delay: Duration, _ work: @escaping () -> Void) -> any ScheduledWork
}

/// A timer that can be cancelled before it fires.
public protocol ScheduledWork: AnyObject {
    /// Makes sure the work does not run; harmless after it ran.
    func cancel()
}

extension Loop {
    /// Traps when called off the loop: loop-confined state is touched only
    /// from its own thread, and a use from elsewhere is a bug in our code,
    /// not a recoverable condition. Checked in release builds too.
    @inline(__always)
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inLoop, "called off its event loop", file: file, line: line)
    }
}

/// A value that may only be used on one loop, carried across threads to get
/// back there (for example a session captured by a storage completion).
///
/// `@unchecked Sendable` is sound because `value` is reachable only through
/// `wrapped`, which checks that the caller is on `loop`, and `execute`,
/// which goes to `loop` first.
public struct LoopBound<Value>: @unchecked Sendable {
    private let value: Value
    /// The loop the value belongs to.
    public let loop: any Loop

    /// Wraps `value`; call on `loop`.
    public init(_ value: Value, on loop: any Loop) {
        loop.assertInLoop()
        self.value = value
        self.loop = loop
    }

    /// The value; call on `loop`.
    public var wrapped: Value {
        loop.assertInLoop()
        return value
    }

    /// Runs `body` with the value on its loop: now if already there, else
    /// posted to the loop.
    public func execute(_ body: @escaping @Sendable (Value) -> Void) {
        if loop.inLoop {
            body(value)
        } else {
            let this = self
            loop.execute { body(this.wrapped) }
        }
    }
}
