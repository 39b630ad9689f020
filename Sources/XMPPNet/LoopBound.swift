/// A loop-confined value (a connection, a session) that may travel between
/// threads but is used only on its loop.
///
/// Another loop delivering a stanza to a session posts work that carries the
/// session in a `LoopBound`:
///
/// ```swift
/// let bound = LoopBound(session, loop: loop)      // on `loop`
/// loop.execute { bound.value.deliver(stanza) }    // from anywhere
/// ```
///
/// `@unchecked Sendable`, and why that holds: the wrapped value is created on
/// `loop` (checked in `init`) and read only through `value`, which checks
/// that the caller runs on `loop`. Moving the wrapper between threads copies
/// the reference (an atomic retain) without touching the value's state.
public struct LoopBound<Value>: @unchecked Sendable {
    /// The loop the value belongs to.
    public let loop: EventLoop
    private let wrapped: Value

    /// Wraps `value`, which belongs to `loop`. Call on `loop`'s thread.
    public init(_ value: Value, loop: EventLoop) {
        loop.assertInLoop()
        self.loop = loop
        wrapped = value
    }

    /// The value. Call on `loop`'s thread.
    public var value: Value {
        loop.assertInLoop()
        return wrapped
    }
}
