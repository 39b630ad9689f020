import Synchronization
import XMPPNet

/// Counts events per peer address in a fixed window and says when an
/// address has had too many: failed logins (RFC 6120 §6.4.5 asks for a
/// bound on retries) and registrations (XEP-0077 §8 asks servers to limit
/// abuse).
///
/// Shared by all loops; the table is pruned so that a flood of addresses
/// cannot grow it without bound.
public final class AddressThrottle: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }

    private let limit: ServerConfig.Throttle?
    private let exempt: @Sendable (String) -> Bool
    private let windows = Mutex<[String: Window]>([:])
    private let maximumAddresses = 100_000

    /// Creates a throttle; `nil` limit means never throttle. Addresses for
    /// which `exempt` is true are never throttled.
    public init(_ limit: ServerConfig.Throttle?, exempt: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.limit = limit
        self.exempt = exempt
    }

    /// An exemption for loopback peers (127.0.0.0/8, ::1), when `enabled`:
    /// local tests, tools and demos register freely.
    public static func exemptingLoopback(_ enabled: Bool) -> @Sendable (String) -> Bool {
        { host in enabled && (SocketAddress(ip: host, port: 0)?.isLoopback ?? false) }
    }

    /// How long `address` must wait, or nil when it may go ahead.
    public func delay(for address: String, now: ContinuousClock.Instant) -> Duration? {
        guard let limit, !exempt(address) else { return nil }
        return windows.withLock { windows in
            guard let window = windows[address] else { return nil }
            let end = window.start + limit.period
            guard now < end else {
                windows[address] = nil
                return nil
            }
            return window.count >= limit.count ? window.start.duration(to: end) - window.start.duration(to: now) : nil
        }
    }

    /// Counts one event (a failed login, a registration) for `address`.
    public func record(for address: String, now: ContinuousClock.Instant) {
        guard let limit, !exempt(address) else { return }
        windows.withLock { windows in
            if windows.count >= maximumAddresses {
                windows = windows.filter { now < $0.value.start + limit.period }
            }
            if let window = windows[address], now < window.start + limit.period {
                windows[address]!.count = window.count + 1
            } else {
                windows[address] = Window(start: now, count: 1)
            }
        }
    }

    /// Forgets `address` (a successful login clears its failures).
    public func reset(for address: String) {
        windows.withLock { $0[address] = nil }
    }
}
