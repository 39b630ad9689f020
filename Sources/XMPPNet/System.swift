// The one file in XMPPNet that calls the operating system for readiness,
// sockets and threads. Linux-only calls (epoll, eventfd, SOCK_NONBLOCK,
// MSG_NOSIGNAL, /proc/thread-self) live here and nowhere else, so a port to
// macOS replaces `Selector` with kqueue and adjusts `Sys` without touching the
// loop or the connections.
#if os(Linux)
    import CSystem
    import Glibc
#else
    #error("XMPPNet runs on Linux for now: port System.swift (kqueue, SO_NOSIGPIPE) first.")
#endif

/// A failed system call: the `errno` value and the call that failed.
public struct IOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The `errno` value, such as `ECONNRESET`.
    public let errno: Int32
    /// The call or situation that failed, such as `"connect"`.
    public let reason: String

    /// Creates an error from an `errno` value and the call that produced it.
    public init(errno: Int32, reason: String) {
        self.errno = errno
        self.reason = reason
    }

    /// The call, the system's message for `errno`, and the number:
    /// `connect: Connection refused (errno 111)`.
    public var description: String {
        "\(reason): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The outcome of a non-blocking call: done, or "try again when ready".
enum IOResult<Value> {
    case processed(Value)
    case wouldBlock
}

/// Runs a C call that returns -1 and sets `errno` on failure: retries it on
/// `EINTR`, turns `EAGAIN`/`EWOULDBLOCK` into `.wouldBlock`, and throws
/// `IOError` for any other failure.
@inline(__always)
func syscall<Result: FixedWidthInteger>(
    _ reason: StaticString, _ call: () -> Result
) throws(IOError) -> IOResult<Result> {
    while true {
        let result = call()
        if result != -1 { return .processed(result) }
        let code = Glibc.errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
        throw IOError(errno: code, reason: "\(reason)")
    }
}

/// `syscall` for calls that do not wait for readiness, where a would-block
/// answer is itself the error.
@inline(__always)
func syscallValue<Result: FixedWidthInteger>(
    _ reason: StaticString, _ call: () -> Result
) throws(IOError) -> Result {
    switch try syscall(reason, call) {
    case .processed(let value): return value
    case .wouldBlock: throw IOError(errno: EWOULDBLOCK, reason: "\(reason)")
    }
}

// MARK: - Readiness

/// What the loop wants to hear about for one descriptor.
struct Interest: OptionSet, Sendable {
    let rawValue: UInt8
    /// Data, end of input or an error can be read.
    static let readable = Interest(rawValue: 1)
    /// The send buffer has room (or a connect finished).
    static let writable = Interest(rawValue: 2)
}

/// What the kernel reported for one descriptor.
struct ReadinessEvents: OptionSet, Sendable {
    let rawValue: UInt8
    /// Data or end of input can be read.
    static let readable = ReadinessEvents(rawValue: 1)
    /// The send buffer has room, or a connect finished.
    static let writable = ReadinessEvents(rawValue: 2)
    /// The peer shut down its sending side (EOF is readable).
    static let readHangup = ReadinessEvents(rawValue: 4)
    /// Both directions are shut down, or the connection was reset.
    static let hangup = ReadinessEvents(rawValue: 8)
    /// An error is pending on the socket (`SO_ERROR`).
    static let error = ReadinessEvents(rawValue: 16)
}

/// An epoll instance plus an eventfd that wakes it from other threads.
///
/// Level-triggered: a descriptor that still has data after a bounded read is
/// reported again on the next wait, which is what fairness needs.
/// Each registration stores `id << 32 | fd` in the event's data so the loop
/// can drop an event for a descriptor that was closed and reused in the same
/// batch.
///
/// Thread use: `wake()` reads only the immutable `wakeupFD` and may be
/// called from any thread; everything else runs on the loop's thread.
final class Selector {
    private let epollFD: Int32
    private let wakeupFD: Int32
    private let events: UnsafeMutableBufferPointer<epoll_event>
    private static let wakeupToken = UInt64.max

    init(capacity: Int = 256) throws(IOError) {
        let epollFD = try syscallValue("epoll_create1") { swiftlet_epoll_create1(Int32(EPOLL_CLOEXEC)) }
        var wakeupFD: Int32 = -1
        do throws(IOError) {
            wakeupFD = try syscallValue("eventfd") { swiftlet_eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = Self.wakeupToken
            _ = try syscallValue("epoll_ctl") { swiftlet_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeupFD, &event) }
        } catch {
            if wakeupFD >= 0 { Glibc.close(wakeupFD) }
            Glibc.close(epollFD)
            throw error
        }
        self.epollFD = epollFD
        self.wakeupFD = wakeupFD
        events = .allocate(capacity: capacity)
    }

    deinit {
        events.deallocate()
        Glibc.close(wakeupFD)
        Glibc.close(epollFD)
    }

    /// Starts watching `fd`. The corresponding C function is `epoll_ctl`.
    func register(fd: Int32, id: UInt32, interest: Interest) throws(IOError) {
        try control(EPOLL_CTL_ADD, fd: fd, id: id, interest: interest)
    }

    /// Changes what `fd` is watched for. The corresponding C function is `epoll_ctl`.
    func reregister(fd: Int32, id: UInt32, interest: Interest) throws(IOError) {
        try control(EPOLL_CTL_MOD, fd: fd, id: id, interest: interest)
    }

    /// Stops watching `fd`; errors are ignored because closing the
    /// descriptor removes it anyway. The corresponding C function is `epoll_ctl`.
    func deregister(fd: Int32) {
        var event = epoll_event()
        _ = swiftlet_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
    }

    /// Wakes a thread blocked in `wait`. Safe from any thread.
    /// The corresponding C function is `write` on an eventfd.
    func wake() {
        var one: UInt64 = 1
        // EAGAIN means the counter is already non-zero: a wake-up is pending.
        _ = try? syscall("write(eventfd)") { Glibc.write(wakeupFD, &one, 8) }
    }

    /// Waits up to `timeout` milliseconds (-1: forever) and calls `body` with
    /// the fd, registration id and events of each ready descriptor.
    /// The corresponding C function is `epoll_wait`.
    func wait(
        timeout: Int32, _ body: (_ fd: Int32, _ id: UInt32, _ events: ReadinessEvents) -> Void
    ) throws(IOError) {
        let count = try syscallValue("epoll_wait") {
            swiftlet_epoll_wait(epollFD, events.baseAddress, Int32(events.count), timeout)
        }
        for index in 0..<Int(count) {
            let token = events[index].data.u64
            if token == Self.wakeupToken {
                var counter: UInt64 = 0
                _ = try? syscall("read(eventfd)") { Glibc.read(wakeupFD, &counter, 8) }
                continue
            }
            let raw = events[index].events
            var ready: ReadinessEvents = []
            if raw & EPOLLIN.rawValue != 0 { ready.insert(.readable) }
            if raw & EPOLLOUT.rawValue != 0 { ready.insert(.writable) }
            if raw & EPOLLRDHUP.rawValue != 0 { ready.insert(.readHangup) }
            if raw & EPOLLHUP.rawValue != 0 { ready.insert(.hangup) }
            if raw & EPOLLERR.rawValue != 0 { ready.insert(.error) }
            body(Int32(bitPattern: UInt32(truncatingIfNeeded: token)), UInt32(token >> 32), ready)
        }
    }

    private func control(_ op: Int32, fd: Int32, id: UInt32, interest: Interest) throws(IOError) {
        var event = epoll_event()
        if interest.contains(.readable) { event.events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if interest.contains(.writable) { event.events |= EPOLLOUT.rawValue }
        event.data.u64 = UInt64(id) << 32 | UInt64(UInt32(bitPattern: fd))
        _ = try syscallValue("epoll_ctl") { swiftlet_epoll_ctl(epollFD, op, fd, &event) }
    }
}

// MARK: - Sockets

/// Thin wrappers over the socket calls XMPPNet uses. Every descriptor is
/// non-blocking and close-on-exec.
enum Sys {
    /// A non-blocking, close-on-exec TCP socket. The corresponding C function is `socket`.
    static func tcpSocket(_ family: SocketAddress.Family) throws(IOError) -> Int32 {
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let type = Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        return try syscallValue("socket") { Glibc.socket(domain, type, 0) }
    }

    /// Sets an integer socket option. The corresponding C function is `setsockopt`.
    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(IOError) {
        var value = value
        _ = try syscallValue("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Disables Nagle's algorithm: stanzas go out as soon as they are written.
    static func setNoDelay(_ fd: Int32) throws(IOError) {
        try setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    /// Sets `TCP_USER_TIMEOUT`: how long sent data may stay unacknowledged
    /// before the kernel closes the connection.
    static func setUnacknowledgedTimeout(_ fd: Int32, _ timeout: Duration) throws(IOError) {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        try setOption(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, Int32(clamping: milliseconds))
    }

    /// Binds and listens, allowing quick restarts (`SO_REUSEADDR`) and keeping
    /// an IPv6 socket IPv6-only. The corresponding C functions are `bind` and `listen`.
    static func listen(_ fd: Int32, on address: SocketAddress, backlog: Int32) throws(IOError) {
        try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        if address.family == .ipv6 { try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
        _ = try syscallValue("bind") { address.withSockAddr { Glibc.bind(fd, $0, $1) } }
        _ = try syscallValue("listen") { Glibc.listen(fd, backlog) }
    }

    /// Accepts one pending connection, made non-blocking and close-on-exec;
    /// nil when none is pending. The corresponding C function is `accept`
    /// (Glibc does not export `accept4` to Swift, hence the `fcntl` calls).
    static func accept(_ fd: Int32) throws(IOError) -> (fd: Int32, remote: SocketAddress?)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = try syscall("accept") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
            }
        }
        guard case .processed(let client) = result else { return nil }
        do throws(IOError) {
            // A new socket has no other status flags to keep (F_SETFL ignores the access mode).
            _ = try syscallValue("fcntl") { fcntl(client, F_SETFL, O_NONBLOCK) }
            _ = try syscallValue("fcntl") { fcntl(client, F_SETFD, FD_CLOEXEC) }
        } catch {
            close(client)
            throw error
        }
        return (client, SocketAddress(storage))
    }

    /// Starts a connect, which ends (at once or later) when the socket turns
    /// writable; `SO_ERROR` then tells how. Not retried on EINTR: the
    /// connect goes on in the background. The corresponding C function is `connect`.
    static func connect(_ fd: Int32, to address: SocketAddress) throws(IOError) {
        guard address.withSockAddr({ Glibc.connect(fd, $0, $1) }) != 0 else { return }
        let code = Glibc.errno
        if code != EINPROGRESS && code != EINTR { throw IOError(errno: code, reason: "connect") }
    }

    /// Reads into `buffer`; 0 means end of input. The corresponding C function is `read`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try syscall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Sends without raising SIGPIPE on a closed peer (EPIPE comes back as an
    /// error instead). The corresponding C function is `send` with `MSG_NOSIGNAL`.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try syscall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends FIN after the queued data. The corresponding C function is `shutdown`.
    static func shutdownOutput(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Releases the descriptor. Not retried on EINTR: Linux frees the
    /// descriptor even then. The corresponding C function is `close`.
    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Returns the free pages of every heap arena to the system.
    /// The corresponding C function is `malloc_trim`.
    static func trimHeap() {
        _ = swiftlet_malloc_trim(0)
    }

    /// The socket's pending error, cleared by reading it (0 when none).
    /// The corresponding C function is `getsockopt` with `SO_ERROR`.
    static func pendingError(_ fd: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if Glibc.getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { return Glibc.errno }
        return code
    }

    /// The address this socket is bound to. The corresponding C function is `getsockname`.
    static func localAddress(_ fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage) : nil
    }
}

// MARK: - Threads

/// The start routine of every thread from `Sys.startThread`: takes back
/// the `ThreadBody` passed as the context, names the thread, runs the body.
private func threadEntry(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
    Sys.nameCurrentThread(body.name)
    body.run()
    return nil
}

/// What a new thread runs, passed through `pthread_create`'s context pointer.
private final class ThreadBody {
    let name: String
    let run: @Sendable () -> Void
    init(name: String, run: @escaping @Sendable () -> Void) {
        self.name = name
        self.run = run
    }
}

extension Sys {
    /// Starts a joinable thread named `name` running `body`. The
    /// corresponding C function is `pthread_create`.
    static func startThread(name: String, _ body: @escaping @Sendable () -> Void) throws(IOError) -> pthread_t {
        let context = Unmanaged.passRetained(ThreadBody(name: name, run: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, threadEntry, context)
        if result != 0 {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            throw IOError(errno: result, reason: "pthread_create")
        }
        return thread
    }

    /// Names the calling thread for `top -H`, `gdb` and crash reports (the
    /// kernel keeps 15 bytes). Glibc's `pthread_setname_np` is not exported
    /// to Swift, so this writes the thread's `comm` file, which is what
    /// that function does for the calling thread.
    fileprivate static func nameCurrentThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
    }

    /// Waits for a thread from `startThread` to end. The corresponding C function is `pthread_join`.
    static func join(_ thread: pthread_t) {
        _ = pthread_join(thread, nil)
    }
}

// MARK: - Socket addresses

extension SocketAddress {
    /// Decodes an IPv4 or IPv6 `sockaddr_storage`; nil for other families.
    init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let sin = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            self.init(host: .ipv4(UInt32(bigEndian: sin.sin_addr.s_addr)), port: UInt16(bigEndian: sin.sin_port))
        case AF_INET6:
            let sin6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            let (high, low) = withUnsafeBytes(of: sin6.sin6_addr) {
                (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)),
                 UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            }
            self.init(host: .ipv6(high, low), port: UInt16(bigEndian: sin6.sin6_port))
        default:
            return nil
        }
    }

    /// Calls `body` with this address as a `sockaddr` and its length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch host {
        case .ipv4(let address):
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = port.bigEndian
            sin.sin_addr.s_addr = address.bigEndian
            return withUnsafePointer(to: &sin) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6(let high, let low):
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &sin6.sin6_addr) {
                $0.storeBytes(of: high.bigEndian, toByteOffset: 0, as: UInt64.self)
                $0.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
            }
            return withUnsafePointer(to: &sin6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
