import Dispatch
import Glibc
import Testing

@testable import XMPPNet

/// Runs `loop` on the calling thread; a watchdog on another thread stops it
/// after `timeout`. Returns false if the watchdog had to.
func runWithWatchdog(_ loop: EventLoop, timeout: Duration = .seconds(10)) -> Bool {
    let finished = Locked(false)
    let timedOut = Locked(false)
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) {
        if !finished.value {
            timedOut.mutate { $0 = true }
            loop.stop()
        }
    }
    loop.run()
    finished.mutate { $0 = true }
    return !timedOut.value
}

@Suite struct EventLoopTests {
    @Test func executeFromAnotherThreadWakesAnIdleLoop() throws {
        try withRunningLoop { loop in
            #expect(!loop.inLoop)
            // Let the loop reach epoll_wait with no timers: only the eventfd can wake it.
            _ = try onLoop(loop) {}
            let ran = DispatchSemaphore(value: 0)
            let wasInLoop = Locked(false)
            loop.execute {
                wasInLoop.mutate { $0 = loop.inLoop }
                ran.signal()
            }
            #expect(ran.wait(timeout: .now() + 5) == .success)
            #expect(wasInLoop.value)
        }
    }

    @Test func executeFromManyThreadsRunsEverythingInOrderPerThread() throws {
        try withRunningLoop { loop in
            let threads = 4
            let perThread = 2000
            let seen = Locked<[[Int]]>(Array(repeating: [], count: threads))
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<perThread {
                    loop.execute { seen.mutate { $0[thread].append(index) } }
                }
            }
            #expect(waitUntil { seen.value.allSatisfy { $0.count == perThread } })
            #expect(seen.value == Array(repeating: Array(0..<perThread), count: threads))
        }
    }

    @Test func runReturnsWhenStoppedFromInside() throws {
        let loop = try EventLoop()
        let ran = Locked(false)
        loop.execute {
            ran.mutate { $0 = loop.inLoop }
            loop.stop()
        }
        #expect(runWithWatchdog(loop))
        #expect(ran.value)
        #expect(!loop.inLoop, "the thread is released when run() returns")
    }

    @Test func workPostedAfterStopIsDropped() throws {
        let loop = try EventLoop.start(name: "test-loop")
        loop.stopAndWait()
        let ran = Locked(false)
        loop.execute { ran.mutate { $0 = true } }
        #expect(!waitUntil(timeout: .milliseconds(50)) { ran.value })
    }

    /// An event for a descriptor that was closed and reused in the same batch
    /// must not reach the descriptor's new owner.
    @Test func staleEventForReusedDescriptorIsDropped() throws {
        try withRunningLoop { loop in
            var reusedOnce = false
            for _ in 0..<10 where !reusedOnce {
                let outcome = try onLoop(loop) { StaleEventProbe.arm(on: loop) }
                let result = try #require(waitFor { outcome.value })
                #expect(!result.staleEventDelivered)
                reusedOnce = result.descriptorReused
            }
            #expect(reusedOnce, "no attempt reused the closed descriptor, so nothing was tested")
        }
    }
}

/// Two pipes made readable at once; whichever reports first closes the
/// other pipe and registers a new descriptor, usually with the freed number.
/// The other pipe's event in the same batch is then stale.
final class StaleEventProbe {
    struct Outcome: Sendable {
        var descriptorReused: Bool
        var staleEventDelivered: Bool
    }

    /// One registration, tagged so the probe knows which one heard an event.
    final class Owner: Selectable {
        let tag: Int
        let probe: StaleEventProbe
        init(tag: Int, probe: StaleEventProbe) {
            self.tag = tag
            self.probe = probe
        }
        func handle(_ events: ReadinessEvents) { probe.handle(tag: tag) }
        func loopWillStop() {}
    }

    let loop: EventLoop
    let outcome = Locked<Outcome?>(nil)
    var pipes: [(read: Int32, write: Int32, id: UInt32)] = []
    var victim: Int?
    var replacement: (fd: Int32, id: UInt32)?

    init(loop: EventLoop) { self.loop = loop }

    static func arm(on loop: EventLoop) -> Locked<Outcome?> {
        let probe = StaleEventProbe(loop: loop)
        for tag in 0..<2 {
            var ends: [Int32] = [0, 0]
            precondition(pipe(&ends) == 0)
            let id = try! loop.register(fd: ends[0], interest: .readable, owner: Owner(tag: tag, probe: probe))
            var byte: UInt8 = 1
            precondition(write(ends[1], &byte, 1) == 1)
            probe.pipes.append((ends[0], ends[1], id))
        }
        return probe.outcome
    }

    func handle(tag: Int) {
        if tag == 2 {
            // Nothing was written to the replacement: only the stale event gets here.
            finish(staleEventDelivered: true)
            return
        }
        var byte: UInt8 = 0
        _ = read(pipes[tag].read, &byte, 1)
        guard victim == nil else { return }
        let other = 1 - tag
        victim = other
        loop.deregister(fd: pipes[other].read, id: pipes[other].id)
        close(pipes[other].read)
        let fd = dup(pipes[tag].write)  // the write end of a pipe never turns readable
        replacement = (fd, try! loop.register(fd: fd, interest: .readable, owner: Owner(tag: 2, probe: self)))
        loop.schedule(after: .milliseconds(20)) { self.finish(staleEventDelivered: false) }
    }

    private func finish(staleEventDelivered: Bool) {
        guard let replacement, let victim, outcome.value == nil else { return }
        let survivor = pipes[1 - victim]
        outcome.mutate {
            $0 = Outcome(
                descriptorReused: replacement.fd == pipes[victim].read, staleEventDelivered: staleEventDelivered)
        }
        loop.deregister(fd: survivor.read, id: survivor.id)
        loop.deregister(fd: replacement.fd, id: replacement.id)
        for fd in [survivor.read, survivor.write, pipes[victim].write, replacement.fd] { close(fd) }
    }
}
