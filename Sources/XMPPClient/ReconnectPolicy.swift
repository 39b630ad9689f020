import XMPPCore

/// When to try again after the connection drops: exponential backoff with
/// jitter, so that many clients cut off together do not return together.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Whether to reconnect at all.
    public var isEnabled = true
    /// The wait before the first attempt.
    public var initialDelay: Duration = .seconds(1)
    /// The longest wait between attempts.
    public var maximumDelay: Duration = .seconds(60)
    /// Each wait is the previous one times this.
    public var multiplier = 2.0
    /// The fraction of each wait that is random: 0.2 spreads a 10 s wait
    /// over 8–12 s.
    public var jitter = 0.2

    /// The default policy: 1 s, 2 s, 4 s … up to 60 s, ±20 %.
    public init() {}

    /// The wait before attempt `attempt` (1 for the first), with `random`
    /// a number in 0..<1 that places it within the jitter range.
    public func delay(forAttempt attempt: Int, random: Double) -> Duration {
        let exponent = Double(max(attempt - 1, 0))
        let base = min(
            initialDelay.seconds * Foundation.pow(multiplier, min(exponent, 64)), maximumDelay.seconds)
        let spread = base * jitter * (2 * random - 1)
        return .milliseconds(Int64(((base + spread) * 1000).rounded()))
    }
}

import Foundation
