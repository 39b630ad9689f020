import Testing
@testable import XMPPServer

/// The bounded table behind the registration and login throttles.
@Suite struct ThrottleWindowsTests {
    private let start = ContinuousClock.now

    /// A flood of new addresses cannot grow the table past its capacity:
    /// the oldest window makes room, and only its key starts over.
    @Test func aFullTableForgetsItsOldestWindow() {
        let throttle = AddressThrottle(.init(1, per: .seconds(3600)), capacity: 3)
        for host in ["192.0.2.1", "192.0.2.2", "192.0.2.3"] {
            #expect(throttle.reserve(for: host, now: start) == nil)
        }
        #expect(throttle.reserve(for: "192.0.2.1", now: start) == .seconds(3600))
        #expect(throttle.reserve(for: "192.0.2.4", now: start) == nil, "a new address still gets a window")
        #expect(throttle.reserve(for: "192.0.2.1", now: start) == nil, "the oldest was forgotten")
        #expect(throttle.reserve(for: "192.0.2.3", now: start) == .seconds(3600), "newer ones are kept")
    }

    /// Windows end one period after they began, oldest first, each with
    /// its own remaining time.
    @Test func windowsEndInTheOrderTheyBegan() {
        let throttle = AddressThrottle(.init(1, per: .seconds(60)), capacity: 10)
        #expect(throttle.reserve(for: "192.0.2.1", now: start) == nil)
        #expect(throttle.reserve(for: "192.0.2.2", now: start + .seconds(30)) == nil)
        #expect(throttle.reserve(for: "192.0.2.1", now: start + .seconds(59)) == .seconds(1))
        #expect(throttle.reserve(for: "192.0.2.1", now: start + .seconds(60)) == nil)
        #expect(throttle.reserve(for: "192.0.2.2", now: start + .seconds(60)) == .seconds(30))
        #expect(throttle.reserve(for: "192.0.2.2", now: start + .seconds(90)) == nil)
    }

    /// Every operation drops ended windows from the front of a queue
    /// instead of scanning the table, which must stay correct when a key
    /// is reset and starts a new window while its old entry is queued.
    @Test func aKeyThatStartsOverKeepsItsNewWindow() {
        var windows = ThrottleWindows(.init(2, per: .seconds(60)), capacity: 10)
        windows.add("juliet", now: start)
        windows.remove("juliet")
        windows.add("juliet", now: start + .seconds(30))
        windows.add("juliet", now: start + .seconds(61))
        let fullAfterOldEntryEnded = windows.isFull("juliet", now: start + .seconds(61))
        let fullAfterNewWindowEnded = windows.isFull("juliet", now: start + .seconds(90))
        #expect(fullAfterOldEntryEnded, "the old entry ended, the new window did not")
        #expect(!fullAfterNewWindowEnded)
    }
}
