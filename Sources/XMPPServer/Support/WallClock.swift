import Foundation

/// The time of day, for stamps that outlive the process (archived
/// messages): the system clock in the server, a settable one in tests.
/// The loop's monotonic `now` cannot serve: it has no calendar meaning.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    /// A clock that reads the time from `read`.
    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    /// The system's clock.
    public static let system = WallClock { Date() }

    /// The current time.
    public var date: Date { read() }

    /// The current time in whole milliseconds since 1970-01-01 00:00 UTC,
    /// the unit the stores keep.
    public var milliseconds: Int {
        Int((read().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The current time in whole seconds since 1970-01-01 00:00 UTC.
    public var seconds: Int {
        Int(read().timeIntervalSince1970.rounded(.down))
    }

    /// The system clock in whole seconds: for HTTP `Date` fields and upload
    /// expiry.
    static func now() -> Int { system.seconds }
}
