#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TCPConnection {
    /// Opens a connection to `address` without blocking the loop.
    ///
    /// `completion` runs later on the loop, exactly once: with the open
    /// connection, on which it must set `handler` (or close it), or with the
    /// error, such as `ECONNREFUSED` or `ETIMEDOUT`. Call on `loop`'s thread.
    /// - Parameters:
    ///   - address: the peer's IP address and port.
    ///   - loop: the loop that will own the connection.
    ///   - options: flow-control settings for the connection.
    ///   - timeout: how long to wait for the handshake. Default 30 s.
    ///   - completion: receives the connection or the error.
    /// The corresponding C function is `connect`.
    public static func connect(
        to address: SocketAddress, on loop: EventLoop, options: Options = Options(),
        timeout: Duration = .seconds(30),
        completion: @escaping (Result<TCPConnection, IOError>) -> Void
    ) {
        loop.assertInLoop()
        let fd: Int32
        do throws(IOError) {
            fd = try Sys.tcpSocket(address.family)
        } catch {
            loop.schedule(after: .zero) { completion(.failure(error)) }
            return
        }
        let connection = TCPConnection(
            fd: fd, remoteAddress: address, loop: loop, options: options, state: .connecting)
        connection.connectCompletion = completion
        do throws(IOError) {
            try Sys.setNoDelay(fd)
            try Sys.connect(fd, to: address)
            connection.registrationID = try loop.register(fd: fd, interest: .writable, owner: connection)
            connection.registeredInterest = .writable
        } catch {
            // Report later, as for every other outcome, never from inside this call.
            loop.schedule(after: .zero) { connection.failConnecting(error) }
            return
        }
        // Whether connect finished at once or is in progress, the socket
        // turns writable when it is done, and the handshake ends there.
        connection.connectTimer = loop.schedule(after: timeout) {
            connection.failConnecting(IOError(errno: ETIMEDOUT, reason: "connect"))
        }
    }

    /// The socket turned writable (or failed) while connecting.
    func finishConnecting(_ events: ReadinessEvents) {
        let code = Sys.pendingError(fd)
        guard code == 0, events.contains(.writable) else {
            failConnecting(IOError(errno: code == 0 ? ECONNREFUSED : code, reason: "connect"))
            return
        }
        state = .open
        connectTimer?.cancel()
        connectTimer = nil
        let completion = connectCompletion
        connectCompletion = nil
        completion?(.success(self))
        start()
    }

    /// Ends a connect attempt and reports `error`, once.
    func failConnecting(_ error: IOError) {
        guard state == .connecting else { return }
        let completion = connectCompletion
        connectCompletion = nil
        finish(error: error)
        completion?(.failure(error))
    }
}
