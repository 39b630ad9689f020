#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening TCP socket on one loop that hands each new connection to
/// `onAccept`, on its own loop or, with `distributingTo`, on one of several
/// loops in turn (one acceptor spreading long-lived connections over every
/// core).
///
/// Accepting continues until the kernel has no more pending connections
/// (capped per wake-up so a connection storm cannot starve established
/// sessions; level-triggered epoll reports the rest at once). When the
/// process or system runs out of descriptors or memory (`EMFILE`, `ENFILE`,
/// `ENOBUFS`, `ENOMEM`), the pending connection cannot be taken and epoll
/// would report it again immediately, so the listener stops watching for
/// `resourceBackoff` instead of spinning, and reports each failure through
/// `onAcceptError` and `acceptErrorCount`.
///
/// The loop keeps the listener alive until `close()` or the loop stops.
/// All members must be used on the loop's thread.
public final class TCPListener {
    /// The loop that owns the listener and the connections it accepts.
    public let loop: EventLoop
    /// The bound address; its port is the real one when 0 was asked for.
    public let localAddress: SocketAddress
    /// Settings given to every accepted connection.
    public var connectionOptions: TCPConnection.Options
    /// Called for each failed accept, for logging or metrics.
    public var onAcceptError: ((IOError) -> Void)?
    /// How many accepts have failed so far.
    public private(set) var acceptErrorCount = 0
    /// How long accepting pauses after running out of descriptors or memory.
    /// Default 100 ms.
    public var resourceBackoff: Duration = .milliseconds(100)

    private var onAccept: ((TCPConnection) -> Void)?
    /// The loops that accepted connections go to, in turn; empty for this
    /// listener's own loop.
    private let targets: [EventLoop]
    private var nextTarget = 0
    private let fd: Int32
    private var registrationID: UInt32 = 0
    private var backoffTimer: EventLoop.Timer?

    /// Accepts handled per readiness event before other work gets a turn.
    static let maxAcceptsPerWakeup = 128

    /// Binds to `address` (port 0 for an ephemeral port), listens, and starts
    /// accepting. Call on `loop`'s thread.
    /// - Parameters:
    ///   - address: the local address; `0.0.0.0` or `::` for all interfaces.
    ///     IPv6 listeners are IPv6-only, so v4 and v6 need one listener each.
    ///   - backlog: the kernel's queue of completed handshakes. Default 511.
    ///   - connectionOptions: settings for accepted connections.
    ///   - loop: the owning loop.
    ///   - onAccept: receives each new connection on the loop. It must set
    ///     the connection's `handler` or close it; reading starts after it
    ///     returns.
    /// - Throws: `IOError`, such as `EADDRINUSE` or `EACCES`.
    /// The corresponding C functions are `socket`, `setsockopt`, `bind` and `listen`.
    public convenience init(
        address: SocketAddress, backlog: Int32 = 511,
        connectionOptions: TCPConnection.Options = TCPConnection.Options(),
        on loop: EventLoop, onAccept: @escaping (TCPConnection) -> Void
    ) throws(IOError) {
        try self.init(
            address: address, backlog: backlog, connectionOptions: connectionOptions, on: loop, targets: [],
            onAccept: onAccept)
    }

    private init(
        address: SocketAddress, backlog: Int32, connectionOptions: TCPConnection.Options, on loop: EventLoop,
        targets: [EventLoop], onAccept: @escaping (TCPConnection) -> Void
    ) throws(IOError) {
        loop.assertInLoop()
        let fd = try Sys.tcpSocket(address.family)
        do throws(IOError) {
            try Sys.listen(fd, on: address, backlog: backlog)
        } catch {
            Sys.close(fd)
            throw error
        }
        self.fd = fd
        self.loop = loop
        self.localAddress = Sys.localAddress(fd) ?? address
        self.connectionOptions = connectionOptions
        self.onAccept = onAccept
        self.targets = targets
        do throws(IOError) {
            registrationID = try loop.register(fd: fd, interest: .readable, owner: self)
        } catch {
            Sys.close(fd)
            throw error
        }
    }

    /// Binds and listens like `init(address:backlog:connectionOptions:on:onAccept:)`,
    /// but creates each accepted connection on the next of `targets` in
    /// turn, where `onAccept` then runs; a connection whose loop is this
    /// listener's own is set up at once, the others are posted to theirs.
    /// Call on `loop`'s thread.
    /// - Parameter targets: The loops to spread connections over (`loop`
    ///   may be one of them); at least one.
    public convenience init(
        address: SocketAddress, backlog: Int32 = 511,
        connectionOptions: TCPConnection.Options = TCPConnection.Options(),
        on loop: EventLoop, distributingTo targets: [EventLoop],
        onAccept: @escaping @Sendable (TCPConnection) -> Void
    ) throws(IOError) {
        precondition(!targets.isEmpty, "TCPListener: no loop to hand connections to")
        try self.init(
            address: address, backlog: backlog, connectionOptions: connectionOptions, on: loop, targets: targets,
            onAccept: onAccept)
    }

    deinit {
        // Reached without close() only if the loop stopped during a backoff.
        if isOpen { Sys.close(fd) }
    }

    /// The bound port.
    public var port: UInt16 { localAddress.port }

    /// True until `close()`.
    public var isOpen: Bool { onAccept != nil }

    /// Stops listening. Connections already accepted stay open.
    public func close() {
        loop.assertInLoop()
        guard isOpen else { return }
        onAccept = nil
        onAcceptError = nil
        backoffTimer?.cancel()
        backoffTimer = nil
        loop.deregister(fd: fd, id: registrationID)
        Sys.close(fd)
    }

    private func acceptPending() {
        for _ in 0..<Self.maxAcceptsPerWakeup {
            guard let onAccept else { return }
            let accepted: (fd: Int32, remote: SocketAddress?)?
            do throws(IOError) {
                accepted = try Sys.accept(fd)
            } catch {
                acceptErrorCount += 1
                onAcceptError?(error)
                if Self.isPerConnection(error.errno) { continue }
                pauseAccepting()
                return
            }
            guard let (clientFD, remote) = accepted else { return }
            // Best effort: a socket that cannot take these options still works.
            try? Sys.setNoDelay(clientFD)
            if let timeout = connectionOptions.unacknowledgedTimeout {
                try? Sys.setUnacknowledgedTimeout(clientFD, timeout)
            }
            hand(clientFD, remote: remote ?? localAddress, to: nextLoop(), onAccept)
        }
    }

    /// The loop the next connection goes to.
    private func nextLoop() -> EventLoop {
        guard !targets.isEmpty else { return loop }
        defer { nextTarget = (nextTarget + 1) % targets.count }
        return targets[nextTarget]
    }

    /// Creates the connection on `target` and starts it there.
    private func hand(
        _ clientFD: Int32, remote: SocketAddress, to target: EventLoop, _ onAccept: @escaping (TCPConnection) -> Void
    ) {
        let options = connectionOptions
        let start = {
            let connection = TCPConnection(fd: clientFD, remoteAddress: remote, loop: target, options: options, state: .open)
            onAccept(connection)
            connection.start()
        }
        guard target !== loop else { return start() }
        // Only the distributing init stores `targets`, and it takes a
        // `@Sendable` `onAccept`; the descriptor is an integer.
        nonisolated(unsafe) let handedOff = start
        target.execute { handedOff() }
    }

    /// Errors about one pending connection, after which the next one can be
    /// accepted (Linux passes the new socket's network errors to accept:
    /// see accept(2), "Error handling").
    private static func isPerConnection(_ code: Int32) -> Bool {
        [ECONNABORTED, EPROTO, EPERM, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH,
         EOPNOTSUPP, ENETUNREACH].contains(code)
    }

    /// Stops watching the socket for `resourceBackoff`, then resumes. The
    /// timer keeps the listener alive meanwhile.
    private func pauseAccepting() {
        loop.deregister(fd: fd, id: registrationID)
        registrationID = 0
        backoffTimer = loop.schedule(after: resourceBackoff) { self.resumeAccepting() }
    }

    private func resumeAccepting() {
        backoffTimer = nil
        do throws(IOError) {
            registrationID = try loop.register(fd: fd, interest: .readable, owner: self)
        } catch {
            acceptErrorCount += 1
            onAcceptError?(error)
            pauseAccepting()
        }
    }
}

extension TCPListener: Selectable {
    func handle(_ events: ReadinessEvents) {
        acceptPending()
    }

    func loopWillStop() {
        close()
    }
}
