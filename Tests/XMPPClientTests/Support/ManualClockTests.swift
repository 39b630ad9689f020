import Testing
import XMPPTestSupport

/// The clock client tests move by hand.
@Suite("Manual clock", .timeLimit(.minutes(1)))
struct ManualClockTests {
    @Test("a sleeper wakes when the clock reaches its deadline, not before")
    func wakesAtDeadline() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(10)) }
        try await clock.waitForSleepers()
        clock.advance(by: .seconds(9))
        try await clock.waitForSleepers()
        clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(clock.now.offset == .seconds(10))
    }

    @Test("a cancelled sleeper stops sleeping at once and throws")
    func cancellation() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(10)) }
        try await clock.waitForSleepers()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        let late = Task { try await clock.sleep(for: .seconds(1)) }
        late.cancel()
        await #expect(throws: CancellationError.self) { try await late.value }
    }

    @Test("a deadline already passed does not sleep")
    func pastDeadline() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: clock.now)
    }
}
