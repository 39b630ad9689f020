/// Gives the memory of closed connections back to the system.
///
/// glibc keeps freed memory in its arenas for reuse and returns on its own
/// only what lies at the top of a heap. What thousands of closed sessions
/// freed sits among memory still in use, so without a trim the process
/// keeps its peak size for good (measured: RSS stayed at the level of 2,000
/// open sessions after they had all closed). `malloc_trim` returns the free
/// pages of every arena.
extension EventLoop {
    /// How long after a connection closes the heap is trimmed: closes that
    /// come in a burst share one trim, and a steady stream of them costs at
    /// most one trim per this interval and loop.
    static let heapTrimDelay = Duration.seconds(1)

    /// Trims the heap `heapTrimDelay` from now unless a trim is already
    /// scheduled; call when something that held memory has gone away.
    func trimHeapSoon() {
        assertInLoop()
        guard !heapTrimScheduled else { return }
        heapTrimScheduled = true
        _ = scheduleTimer(after: Self.heapTrimDelay) { [unowned self] in
            heapTrimScheduled = false
            Sys.trimHeap()
        }
    }
}
