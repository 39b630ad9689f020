import Glibc
import XMPPNet
import XMPPTestSupport

/// A blocking TCP socket for live tests: connect, write everything, and
/// read with a deadline, so a silent server fails a test instead of
/// hanging it. Deliberately not XMPPNet's non-blocking connection: the
/// client side of a live test shares no I/O code with the server it tests.
final class LiveSocket {
    private var fd: Int32
    /// The client end, as the server logs its peer: `127.0.0.1:40312` or
    /// `[::1]:40312`.
    let localAddress: String

    /// Connects to `address`, failing at once if nothing listens there.
    ///
    /// The corresponding C functions are `socket`, `connect` and
    /// `setsockopt(TCP_NODELAY)`.
    init(connectingTo address: SocketAddress) throws {
        let family = address.family == .ipv4 ? AF_INET : AF_INET6
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Self.error("socket") }
        var storage = sockaddr_storage()
        let length: Int
        switch address.family {
        case .ipv4:
            length = MemoryLayout<sockaddr_in>.size
            withUnsafeMutableBytes(of: &storage) { raw in
                let v4 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                v4.pointee.sin_family = sa_family_t(AF_INET)
                v4.pointee.sin_port = address.port.bigEndian
                _ = inet_pton(AF_INET, address.ipString, &v4.pointee.sin_addr)
            }
        case .ipv6:
            length = MemoryLayout<sockaddr_in6>.size
            withUnsafeMutableBytes(of: &storage) { raw in
                let v6 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                v6.pointee.sin6_family = sa_family_t(AF_INET6)
                v6.pointee.sin6_port = address.port.bigEndian
                _ = inet_pton(AF_INET6, address.ipString, &v6.pointee.sin6_addr)
            }
        }
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(length)) }
        }
        guard connected == 0 else {
            let error = Self.error("connect to \(address)")
            Glibc.close(fd)
            throw error
        }
        // Each write goes out as its own segment, so that tests sending a
        // byte at a time reach the server in pieces that small.
        var noDelay: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        self.fd = fd
        localAddress = Self.localAddress(of: fd)
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Whether `close()` or `reset()` was called.
    var isClosed: Bool { fd < 0 }

    /// Writes all of `bytes`.
    ///
    /// `MSG_NOSIGNAL`: writing to a connection the server has closed must
    /// throw `EPIPE`, not kill the test process with `SIGPIPE`.
    ///
    /// The corresponding C function is `send`.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.error("send")
            }
            offset += written
        }
    }

    /// The bytes that arrive next, waiting until `deadline`; `nil` once the
    /// server has closed the connection.
    /// - Throws: `TestFailure` when the deadline passes first, or on a
    ///   socket error (a reset counts as one).
    ///
    /// The corresponding C functions are `poll` and `recv`.
    func read(until deadline: ContinuousClock.Instant) throws -> [UInt8]? {
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Self.milliseconds(until: deadline))
            if ready < 0 {
                if errno == EINTR { continue }
                throw Self.error("poll")
            }
            guard ready > 0 else { throw TestFailure("no data from the server within the deadline") }
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.error("recv")
            }
            return count == 0 ? nil : Array(buffer.prefix(count))
        }
    }

    /// Closes the socket (a FIN if nothing unread is left).
    ///
    /// The corresponding C function is `close`.
    func close() {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        fd = -1
    }

    /// Drops the connection with a TCP reset (RST), as a crashed client does:
    /// a zero linger time makes `close` discard unsent data and reset.
    ///
    /// The corresponding C functions are `setsockopt(SO_LINGER)` and `close`.
    func reset() {
        guard fd >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Whether an IPv6 socket can be bound to `::1` on this machine (some
    /// containers have no IPv6 loopback).
    static let ipv6LoopbackWorks: Bool = {
        let probe = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { Glibc.close(probe) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
            }
        }
    }()

    /// The socket's own address, in `SocketAddress`'s notation.
    ///
    /// The corresponding C function is `getsockname`.
    private static func localAddress(of fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let ip = { String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        if storage.ss_family == sa_family_t(AF_INET6) {
            var v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            _ = inet_ntop(AF_INET6, &v6.sin6_addr, &text, socklen_t(text.count))
            return "[\(ip())]:\(UInt16(bigEndian: v6.sin6_port))"
        }
        var v4 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
        _ = inet_ntop(AF_INET, &v4.sin_addr, &text, socklen_t(text.count))
        return "\(ip()):\(UInt16(bigEndian: v4.sin_port))"
    }

    /// The time left until `deadline`, for `poll`.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    private static func error(_ what: String) -> TestFailure {
        TestFailure("\(what): \(String(cString: strerror(errno)))")
    }
}
