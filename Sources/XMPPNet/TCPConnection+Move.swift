extension TCPConnection {
    /// Hands this open connection to `target`: this loop stops watching
    /// it, and `target` watches it from its next turn on, with the output
    /// still queued, the reading pause and the handler kept. `then` runs
    /// on `target` once it owns the connection.
    ///
    /// Call on the connection's loop. Between this call and `then`, no
    /// loop touches the connection, so its owner must not either. A
    /// connection that is no longer open stays where it is, and `then`
    /// does not run.
    public func move(to target: EventLoop, then: @escaping () -> Void) {
        loop.assertInLoop()
        guard state == .open else { return }
        if registrationID != 0 {
            loop.deregister(fd: fd, id: registrationID)
            registrationID = 0
            registeredInterest = []
        }
        let moving = Moving(connection: self, then: then)
        target.execute {
            moving.connection.loop = target
            moving.connection.start()
            if moving.connection.state == .open { moving.then() }
        }
    }
}

/// A connection on its way between loops, with what runs on arrival.
///
/// `@unchecked Sendable` is sound because neither loop touches the
/// connection between `move(to:then:)` and the arrival (see there).
private struct Moving: @unchecked Sendable {
    let connection: TCPConnection
    let then: () -> Void
}
