@testable import XMPPNet

/// A loop-confined value (a connection) that a test carries between
/// threads but uses only on its loop.
///
/// `@unchecked Sendable`, and why that holds: the wrapped value is created on
/// `loop` (checked in `init`) and read only through `value`, which checks
/// that the caller runs on `loop`. Moving the wrapper between threads copies
/// the reference (an atomic retain) without touching the value's state.
struct LoopBound<Value>: @unchecked Sendable {
    /// The loop the value belongs to.
    let loop: EventLoop
    private let wrapped: Value

    /// Wraps `value`, which belongs to `loop`. Call on `loop`'s thread.
    init(_ value: Value, loop: EventLoop) {
        loop.assertInLoop()
        self.loop = loop
        wrapped = value
    }

    /// The value. Call on `loop`'s thread.
    var value: Value {
        loop.assertInLoop()
        return wrapped
    }
}
