#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A mutual-exclusion lock over a heap-allocated `pthread_mutex_t` (a
/// mutex must not move, so it cannot live inline in a Swift value).
///
/// Used where a loop's state meets other threads: the task queue of
/// `EventLoop.execute`. `Synchronization.Mutex` would do on Linux but needs
/// macOS 15, and the package keeps older macOS in reach.
///
/// `@unchecked Sendable`: the only state is the mutex itself, which exists to
/// be shared between threads; it is created in `init` and destroyed in
/// `deinit`, when no other reference can exist.
final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    /// The corresponding C functions are `pthread_mutex_lock` and `pthread_mutex_unlock`.
    @inline(__always)
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
