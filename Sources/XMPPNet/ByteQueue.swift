/// The unsent output of one connection: bytes appended at the back, sent
/// from the front.
///
/// One contiguous allocation, so a flush is a single `send` of everything
/// queued. Sent bytes are dropped by moving `head`; the live bytes are moved
/// to the front only when an append would otherwise have to grow. The memory
/// is released once drained if it grew past `retainedCapacity`, so a
/// connection that once queued megabytes does not keep them while idle.
///
/// Noncopyable: it owns its allocation and frees it in `deinit`.
struct ByteQueue: ~Copyable {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private var head = 0
    private var tail = 0

    /// Capacity kept for reuse after the queue drains.
    static let retainedCapacity = 64 * 1024

    init() {}

    deinit {
        base?.deallocate()
    }

    /// Bytes queued and not yet sent.
    var count: Int { tail - head }
    var isEmpty: Bool { head == tail }

    /// The queued bytes, valid until the next mutation.
    var readableBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base.map { $0 + head }, count: count)
    }

    /// Queues a copy of `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if tail + bytes.count > capacity { makeRoom(for: bytes.count) }
        (base! + tail).copyMemory(from: source, byteCount: bytes.count)
        tail += bytes.count
    }

    /// Drops `byteCount` sent bytes from the front.
    mutating func consume(_ byteCount: Int) {
        precondition(byteCount <= count, "consumed more than was queued")
        head += byteCount
        guard head == tail else { return }
        head = 0
        tail = 0
        if capacity > Self.retainedCapacity { release() }
    }

    /// Drops everything and frees the memory.
    mutating func removeAll() {
        head = 0
        tail = 0
        release()
    }

    private mutating func release() {
        base?.deallocate()
        base = nil
        capacity = 0
    }

    /// Makes room for `extra` more bytes at the back: slides the live bytes to
    /// the front if that suffices and they are at most half the buffer (so
    /// the copy is paid for by the space gained), else reallocates with
    /// doubling.
    private mutating func makeRoom(for extra: Int) {
        let live = count
        if live + extra <= capacity && live <= capacity / 2, let base {
            base.copyMemory(from: base + head, byteCount: live)
        } else {
            let newCapacity = max(capacity * 2, live + extra, 4096)
            let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            if let base {
                newBase.copyMemory(from: base + head, byteCount: live)
                base.deallocate()
            }
            base = newBase
            capacity = newCapacity
        }
        head = 0
        tail = live
    }
}
