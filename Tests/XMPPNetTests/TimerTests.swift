import Dispatch
import Testing

@testable import XMPPNet

/// A small deterministic generator (SplitMix64) so a failing order repeats.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct TimerTests {
    @Test func timersFireInDeadlineOrderAndCancelledOnesDoNot() throws {
        let loop = try EventLoop()
        let fired = Locked<[Int]>([])
        loop.execute {
            loop.schedule(after: .milliseconds(30)) {
                fired.mutate { $0.append(30) }
                loop.stop()
            }
            loop.schedule(after: .milliseconds(10)) { fired.mutate { $0.append(10) } }
            let cancelled = loop.schedule(after: .milliseconds(15)) { fired.mutate { $0.append(15) } }
            loop.schedule(after: .milliseconds(20)) { fired.mutate { $0.append(20) } }
            cancelled.cancel()
            #expect(!cancelled.isPending)
        }
        #expect(runWithWatchdog(loop))
        #expect(fired.value == [10, 20, 30])
    }

    @Test func equalDeadlinesFireInSchedulingOrder() throws {
        let loop = try EventLoop()
        let fired = Locked<[Int]>([])
        loop.execute {
            let deadline = loop.now + .milliseconds(5)
            for index in 0..<20 {
                loop.schedule(at: deadline) { fired.mutate { $0.append(index) } }
            }
            loop.schedule(at: deadline + .milliseconds(1)) { loop.stop() }
        }
        #expect(runWithWatchdog(loop))
        #expect(fired.value == Array(0..<20))
    }

    /// Many timers in random order, a third cancelled: the heap must hand
    /// back exactly the rest, sorted by deadline.
    @Test func heapFiresSurvivorsSortedAfterRandomCancellations() throws {
        let loop = try EventLoop()
        let fired = Locked<[Int]>([])
        let expected = Locked<[Int]>([])
        loop.execute {
            var random = SplitMix64(state: 42)
            let base = loop.now - .seconds(1)  // all due at once: only the heap decides the order
            var timers: [(offset: Int, timer: EventLoop.Timer)] = []
            for _ in 0..<600 {
                let offset = Int.random(in: 0..<100_000, using: &random)
                let timer = loop.schedule(at: base + .microseconds(offset)) { fired.mutate { $0.append(offset) } }
                timers.append((offset, timer))
            }
            timers.shuffle(using: &random)
            for (_, timer) in timers.prefix(200) { timer.cancel() }
            expected.mutate { $0 = timers.dropFirst(200).map(\.offset).sorted() }
            loop.schedule(after: .milliseconds(1)) { loop.stop() }
        }
        #expect(runWithWatchdog(loop))
        #expect(fired.value.count == 400)
        #expect(fired.value == expected.value)
    }

    /// A timer that keeps re-arming itself already due must not keep the loop
    /// from its other work: each re-armed timer waits for the next iteration.
    @Test func selfRearmingDueTimerDoesNotStarveOtherWork() throws {
        try withRunningLoop { loop in
            let firings = Locked(0)
            let firingsWhenWorkRan = Locked<Int?>(nil)
            try onLoop(loop) {
                func rearm() {
                    guard firings.mutate({ $0 += 1; return $0 }) < 100_000 else { return }
                    loop.schedule(at: loop.now - .seconds(1), rearm)
                }
                rearm()
                // Queued in the same turn as the first firing: it must run
                // within a turn or two, not after the timer gives up.
                loop.execute { firingsWhenWorkRan.mutate { $0 = firings.value } }
            }
            let count = try #require(waitFor { firingsWhenWorkRan.value })
            #expect(count < 10)
        }
    }

    @Test func epollTimeoutIsRoundedUpToWholeMilliseconds() throws {
        try withRunningLoop { loop in
            let timeouts = try onLoop(loop) { () -> [Int32] in
                var seen = [loop.timeoutMilliseconds()]
                let due = loop.schedule(at: loop.now - .milliseconds(1)) {}
                seen.append(loop.timeoutMilliseconds())
                due.cancel()
                let later = loop.schedule(after: .microseconds(1_500_500)) {}
                seen.append(loop.timeoutMilliseconds())
                later.cancel()
                return seen
            }
            #expect(timeouts[0] == -1)
            #expect(timeouts[1] == 0)
            #expect((1500...1501).contains(timeouts[2]))
        }
    }
}
