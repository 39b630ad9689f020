import Synchronization
import XMPPNet

/// Counts registrations per peer address block in a fixed window and
/// refuses them past the limit (XEP-0077 §8 asks servers to limit abuse).
///
/// An attempt takes its place in the count before any storage work starts
/// (`reserve`), and every attempt counts, taken usernames too: parallel
/// requests from one block cannot all pass a check made before any of them
/// is counted. Blocks are IPv4 addresses and IPv6 /64s
/// (`SocketAddress.addressBlock`).
///
/// Shared by all loops; the table is bounded (`ThrottleWindows`).
public final class AddressThrottle: Sendable {
    private let exempt: @Sendable (String) -> Bool
    /// The counts; nil when the throttle is off.
    private let windows: Mutex<ThrottleWindows?>

    /// Creates a throttle; `nil` limit means never throttle. Hosts for
    /// which `exempt` is true are never throttled. At most `capacity`
    /// address blocks are tracked at once.
    public init(
        _ limit: ServerConfig.Throttle?, capacity: Int = AddressThrottle.defaultCapacity,
        exempt: @escaping @Sendable (String) -> Bool = { _ in false }
    ) {
        self.windows = Mutex(limit.map { ThrottleWindows($0, capacity: capacity) })
        self.exempt = exempt
    }

    /// The number of address blocks (or accounts) a throttle tracks by
    /// default: a few MB at most, far more than a busy server sees honestly.
    public static let defaultCapacity = 100_000

    /// An exemption for loopback peers (127.0.0.0/8, ::1), when `enabled`:
    /// local tests, tools and demos register freely.
    public static func exemptingLoopback(_ enabled: Bool) -> @Sendable (String) -> Bool {
        { host in enabled && (SocketAddress(ip: host, port: 0)?.isLoopback ?? false) }
    }

    /// The unit that per-address limits count for `host` (an IP address
    /// without port): its `SocketAddress.addressBlock`, or `host` itself
    /// if it is not an IP address.
    static func block(of host: String) -> String {
        SocketAddress(ip: host, port: 0)?.addressBlock ?? host
    }

    /// Counts one event for `host`'s block and returns nil if it may go
    /// ahead; past the limit, counts nothing and returns how long until the
    /// block's window ends.
    public func reserve(for host: String, now: ContinuousClock.Instant) -> Duration? {
        guard !exempt(host) else { return nil }
        let block = Self.block(of: host)
        return windows.withLock { windows in
            if windows?.isFull(block, now: now) == true { return windows?.timeUntilWindowEnds(for: block, now: now) }
            windows?.add(block, now: now)
            return nil
        }
    }
}
