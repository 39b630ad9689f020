import XMPPNet

extension ClientSession {
    /// Moves this session, just authenticated as `username`, with its
    /// connection to the loop where the account's sessions live
    /// (`SessionHomes`), then runs `next` there. Runs `next` at once when
    /// the session is home already or cannot move (one loop; WebSocket).
    ///
    /// Input waits meanwhile, as for storage. The move starts in the
    /// loop's next turn, once whatever called this is done with the
    /// session; between the two loops nothing touches it.
    func moveHome(of username: String, then next: @escaping (ClientSession) -> Void) {
        guard let home = server.homes.home(of: username), home.context !== server,
            let target = home.context.loop as? EventLoop, let transport = transport as? TCPTransport
        else { return next(self) }
        waiting(for: { [self] done in
            let move = Move(session: self, transport: transport, home: home, target: target, done: done)
            server.loop.execute { move.start() }
        }, then: { [self] in next(self) })
    }
}

/// A session on its way to its account's loop.
///
/// `@unchecked Sendable`: it is created on the session's loop and used
/// there (`start`), then on the target loop only after the connection has
/// arrived there, when nothing on the first loop refers to it any more.
private struct Move: @unchecked Sendable {
    let session: ClientSession
    let transport: TCPTransport
    let home: SessionHomes.Home
    let target: EventLoop
    let done: (()) -> Void

    /// Leaves this loop: its timers and connection table let go of the
    /// session, and the connection moves; on arrival the session takes
    /// the new loop's context, table and timers, and its wait ends.
    func start() {
        guard session.phase != .closed, let connection = transport.connection, connection.isOpen,
            let here = session.server.homes.home(of: session.server)
        else { return }
        session.handshakeTimer?.cancel()
        session.idleTimer?.cancel()
        here.connections.remove(transport)
        session.server = home.context
        connection.move(to: target) { [self] in
            home.connections.add(transport)
            session.startTimers()
            done(())
        }
    }
}
