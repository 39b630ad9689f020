import Glibc
import Testing

@testable import XMPPNet

/// Whether this machine can bind a TCP socket to ::1.
func ipv6LoopbackAvailable() -> Bool {
    guard let fd = try? Sys.tcpSocket(.ipv6) else { return false }
    defer { Sys.close(fd) }
    return (try? Sys.listen(fd, on: SocketAddress(ip: "::1", port: 0)!, backlog: 1)) != nil
}

@Suite struct TCPTests {
    @Test func listenerOnPortZeroReportsItsPort() throws {
        try withRunningLoop { loop in
            let outcome = try onLoop(loop) { () -> (UInt16, IOError?) in
                let listener = try TCPListener(address: SocketAddress("127.0.0.1")!, on: loop) { $0.close() }
                defer { listener.close() }
                #expect(listener.localAddress == SocketAddress(ip: "127.0.0.1", port: listener.port))
                do throws(IOError) {
                    let second = try TCPListener(address: listener.localAddress, on: loop) { $0.close() }
                    second.close()
                    return (listener.port, nil)
                } catch {
                    return (listener.port, error)
                }
            }
            #expect(outcome.0 != 0)
            #expect(outcome.1?.errno == EADDRINUSE, "a second listener on the same port fails")
        }
    }

    @Test func echoOverIPv4Loopback() throws {
        try echo(ip: "127.0.0.1")
    }

    @Test(.enabled(if: ipv6LoopbackAvailable(), "this machine has no IPv6 loopback"))
    func echoOverIPv6Loopback() throws {
        try echo(ip: "::1")
    }

    private func echo(ip: String) throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop, ip: ip, echo: true)
            let addresses = try onLoop(loop) { () -> [SocketAddress?] in
                pair.client.wrapped.write(Array("<stream:stream>".utf8))
                return [pair.client.wrapped.remoteAddress, pair.server.wrapped.localAddress,
                        pair.client.wrapped.localAddress, pair.server.wrapped.remoteAddress]
            }
            #expect(addresses[0] == addresses[1])
            #expect(addresses[2] == addresses[3])
            #expect(addresses.allSatisfy { $0?.isLoopback == true && $0?.family == (ip == "::1" ? .ipv6 : .ipv4) })
            #expect(waitUntil { pair.clientRecording.text == "<stream:stream>" })
            #expect(pair.serverRecording.text == "<stream:stream>")
        }
    }

    /// A peer that does not read makes the writer queue output; past the
    /// high-water mark the writer stops reading; once the peer reads,
    /// everything arrives and the writer reads again below the low-water mark.
    @Test func largeWriteToStalledPeerAppliesBackpressure() throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop)
            let chunk = pattern(8 << 20)
            let (chunks, backpressured, readable) = try onLoop(loop) { () -> (Int, Bool, Bool) in
                pair.client.wrapped.pauseReading()
                let server = pair.server.wrapped
                var chunks = 0
                // Loopback buffers can absorb several MiB; write until they cannot.
                while !server.isBackpressured && chunks < 8 {
                    server.write(chunk)
                    chunks += 1
                }
                return (chunks, server.isBackpressured, server.registeredInterest.contains(.readable))
            }
            #expect(backpressured, "still not backpressured after \(chunks) chunks")
            #expect(!readable, "a backpressured connection stops reading")

            try onLoop(loop) { pair.client.wrapped.write(Array("ping".utf8)) }
            let waiting = waitUntil { (try? onLoop(loop) { unreadBytes(pair.server.wrapped) }) == 4 }
            #expect(waiting, "the peer's bytes wait in the kernel while the loop keeps running")
            #expect(pair.serverRecording.bytes.value.isEmpty)

            try onLoop(loop) { pair.client.wrapped.resumeReading() }
            let total = chunks * chunk.count
            #expect(waitUntil(timeout: .seconds(30)) { pair.clientRecording.byteCount >= total })
            #expect(pair.clientRecording.received(chunk, times: chunks))

            #expect(waitUntil { pair.serverRecording.text == "ping" })
            let lowWaterMark = TCPConnection.Options().lowWaterMark
            #expect(try #require(pair.serverRecording.bufferedAtFirstRead.value) <= lowWaterMark)
            #expect(pair.serverRecording.drains.value >= 1)
            #expect(try onLoop(loop) { pair.server.wrapped.isBackpressured } == false)
        }
    }

    @Test func pausedReadingHoldsBytesUntilResumed() throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop)
            try onLoop(loop) {
                pair.server.wrapped.pauseReading()
                pair.client.wrapped.write(Array("abc".utf8))
            }
            #expect(waitUntil { (try? onLoop(loop) { unreadBytes(pair.server.wrapped) }) == 3 })
            #expect(pair.serverRecording.bytes.value.isEmpty)
            try onLoop(loop) { pair.server.wrapped.resumeReading() }
            #expect(waitUntil { pair.serverRecording.text == "abc" })
        }
    }

    @Test func peerCloseIsReportedOnce() throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop)
            try onLoop(loop) { pair.client.wrapped.close() }
            #expect(waitUntil { !pair.serverRecording.closes.value.isEmpty })
            #expect(!waitUntil(timeout: .milliseconds(100)) { pair.serverRecording.closes.value.count > 1 })
            #expect(pair.serverRecording.closes.value == [nil])
            #expect(pair.clientRecording.closes.value == [nil])
            #expect(try onLoop(loop) { pair.server.wrapped.isOpen } == false)
        }
    }

    @Test func peerResetIsReportedOnce() throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop)
            try onLoop(loop) {
                // SO_LINGER with a zero timeout makes close() send RST instead of FIN.
                var option = linger(l_onoff: 1, l_linger: 0)
                let client = pair.client.wrapped
                _ = setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
                client.close()
            }
            #expect(waitUntil { !pair.serverRecording.closes.value.isEmpty })
            #expect(!waitUntil(timeout: .milliseconds(100)) { pair.serverRecording.closes.value.count > 1 })
            let closes = pair.serverRecording.closes.value
            #expect(closes.count == 1)
            #expect(closes.first??.errno == ECONNRESET)
        }
    }

    @Test func closeAfterFlushDeliversEverythingThenEnds() throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop)
            let chunk = pattern(1 << 20)
            let (chunks, queued) = try onLoop(loop) { () -> (Int, Int) in
                pair.client.wrapped.pauseReading()
                let server = pair.server.wrapped
                var chunks = 0
                while server.bufferedByteCount == 0 && chunks < 64 {
                    server.write(chunk)
                    chunks += 1
                }
                server.close(afterFlush: true)
                server.write(Array("ignored".utf8))
                return (chunks, server.bufferedByteCount)
            }
            #expect(queued > 0, "output is waiting, so the close must wait for the flush")
            #expect(pair.serverRecording.closes.value.isEmpty)
            try onLoop(loop) { pair.client.wrapped.resumeReading() }
            #expect(waitUntil { !pair.clientRecording.closes.value.isEmpty })
            #expect(pair.clientRecording.received(chunk, times: chunks))
            #expect(pair.clientRecording.closes.value == [nil])
            #expect(pair.serverRecording.closes.value == [nil])
        }
    }

    @Test func aClosedConnectionKeepsReadingSoThatLateInputDoesNotResetThePeer() throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop)
            let farewell = pattern(100_000)
            try onLoop(loop) {
                pair.client.wrapped.pauseReading()  // the farewell waits unread at the peer
                pair.server.wrapped.write(farewell)
                pair.server.wrapped.close(afterFlush: true)
            }
            #expect(waitUntil { pair.serverRecording.closes.value == [nil] }, "the handler hears of the close at once")
            // Input that arrives after the close: a closed socket would answer RST.
            try onLoop(loop) { pair.client.wrapped.write(Array("late".utf8)) }
            usleep(100_000)
            #expect(try onLoop(loop) { pair.server.wrapped.state } == .draining)
            try onLoop(loop) { pair.client.wrapped.resumeReading() }
            #expect(waitUntil { !pair.clientRecording.closes.value.isEmpty })
            #expect(pair.clientRecording.received(farewell, times: 1))
            #expect(pair.clientRecording.closes.value == [nil], "an orderly close, not a reset")
            #expect(waitUntil { (try? onLoop(loop) { pair.server.wrapped.state }) == .closed }, "closed at the peer's end")
        }
    }

    /// A peer that never reads cannot keep a closing connection, its
    /// descriptor and its queued output: they go after `closeTimeout`.
    @Test func aClosingConnectionWhosePeerDoesNotReadIsDroppedAfterTheCloseTimeout() throws {
        var options = TCPConnection.Options()
        options.closeTimeout = .milliseconds(300)
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop, serverOptions: options)
            let start = ContinuousClock.now
            let queued = try onLoop(loop) { () -> Int in
                pair.client.wrapped.pauseReading()  // never reads again
                let server = pair.server.wrapped
                var chunks = 0
                while server.bufferedByteCount == 0 && chunks < 64 {
                    server.write(pattern(1 << 20))
                    chunks += 1
                }
                server.close(afterFlush: true)
                return server.bufferedByteCount
            }
            #expect(queued > 0, "output is waiting, so the close waits for the peer")
            #expect(waitUntil { (try? onLoop(loop) { pair.server.wrapped.state }) == .closed })
            #expect(ContinuousClock.now - start >= options.closeTimeout)
            #expect(pair.serverRecording.closes.value.map { $0?.errno } == [ETIMEDOUT])
            #expect(try onLoop(loop) { pair.server.wrapped.bufferedByteCount } == 0, "the queue is released")
        }
    }

    @Test func acceptedConnectionsGetTheUnacknowledgedTimeout() throws {
        var options = TCPConnection.Options()
        options.unacknowledgedTimeout = .seconds(42)
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop, serverOptions: options)
            let timeout = try onLoop(loop) { () -> Int32 in
                var value: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(pair.server.wrapped.fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, &value, &length)
                return value
            }
            #expect(timeout == 42_000)
        }
    }

    @Test func aDrainingConnectionClosesAfterTheLingerTimeout() throws {
        try withRunningLoop { loop in
            let pair = try ConnectedPair.make(on: loop)
            try onLoop(loop) {
                pair.client.wrapped.pauseReading()  // never reads the end, never closes
                pair.server.wrapped.close(afterFlush: true)
            }
            #expect(try onLoop(loop) { pair.server.wrapped.state } == .draining)
            let start = ContinuousClock.now
            #expect(waitUntil { (try? onLoop(loop) { pair.server.wrapped.state }) == .closed })
            #expect(ContinuousClock.now - start >= TCPConnection.lingerTimeout - .milliseconds(100))
        }
    }

    @Test func connectToClosedPortFails() throws {
        try withRunningLoop { loop in
            let outcome = Locked<Result<Bool, IOError>?>(nil)
            try onLoop(loop) {
                let listener = try TCPListener(address: SocketAddress("127.0.0.1")!, on: loop) { $0.close() }
                let address = listener.localAddress
                listener.close()
                TCPConnection.connect(to: address, on: loop) { result in
                    if case .success(let connection) = result { connection.close() }
                    outcome.mutate { $0 = result.map { _ in true } }
                }
            }
            let result = try #require(waitFor { outcome.value })
            #expect(throws: IOError(errno: ECONNREFUSED, reason: "connect")) { try result.get() }
        }
    }

    @Test func stoppingTheLoopClosesItsConnections() throws {
        let loop = try EventLoop.start(name: "test-loop")
        let pair = try ConnectedPair.make(on: loop)
        loop.stopAndWait()
        let cancelled = IOError(errno: ECANCELED, reason: "event loop stopped")
        #expect(pair.serverRecording.closes.value == [cancelled])
        #expect(pair.clientRecording.closes.value == [cancelled])
    }
}
