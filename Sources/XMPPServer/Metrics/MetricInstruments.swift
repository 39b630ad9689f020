/// A label whose values are known in advance, so that each value owns a
/// slot of a preallocated array: counting is an index and an add, with no
/// string built or hashed on the way.
protocol MetricLabel: CaseIterable {
    /// This value's index, from 0 to `allCases.count - 1`.
    var slot: Int { get }
    /// The label names and values of this value, such as `kind="iq"`.
    var labels: [(String, String)] { get }
}

/// A counter per value of `Label`.
struct LabelledCounter<Label: MetricLabel>: Sendable {
    private var counts = [UInt64](repeating: 0, count: Label.allCases.count)

    /// Adds every count of `other` (another loop's) to this one's.
    mutating func add(_ other: LabelledCounter) {
        for slot in counts.indices { counts[slot] &+= other.counts[slot] }
    }

    /// Adds `amount` to the count of `label`.
    mutating func increment(_ label: Label, by amount: UInt64 = 1) {
        counts[label.slot] &+= amount
    }

    /// The count of `label`.
    subscript(label: Label) -> UInt64 { counts[label.slot] }

    /// Every value with its count, in the order of `Label.allCases`.
    var samples: [(labels: [(String, String)], count: UInt64)] {
        Label.allCases.map { ($0.labels, counts[$0.slot]) }
    }
}

/// Durations counted in fixed buckets, with their sum, in nanoseconds.
///
/// Buckets are stored apart (not cumulative) so that an observation adds
/// to one slot; the exposition sums them up.
struct Histogram: Sendable, Equatable {
    /// The buckets' inclusive upper bounds, ascending, in nanoseconds; a
    /// last bucket, `+Inf`, follows them.
    let bounds: [Int64]
    /// Observations per bucket: `bounds.count + 1` slots.
    private(set) var counts: [UInt64]
    /// The sum of every observation, in nanoseconds.
    private(set) var sum: Int64 = 0

    /// An empty histogram with these bucket bounds.
    init(bounds: [Int64]) {
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bucket bounds must ascend")
        self.bounds = bounds
        self.counts = [UInt64](repeating: 0, count: bounds.count + 1)
    }

    /// A histogram counted elsewhere (the storage thread's).
    init(bounds: [Int64], counts: [UInt64], sum: Int64) {
        precondition(counts.count == bounds.count + 1, "one count per bucket and one for +Inf")
        self.bounds = bounds
        self.counts = counts
        self.sum = sum
    }

    /// Counts one observation of `nanoseconds`.
    mutating func observe(nanoseconds: Int64) {
        var bucket = 0
        while bucket < bounds.count, nanoseconds > bounds[bucket] { bucket += 1 }
        counts[bucket] &+= 1
        sum &+= nanoseconds
    }

    /// Counts one observation of `duration`.
    mutating func observe(_ duration: Duration) {
        observe(nanoseconds: duration.nanoseconds)
    }

    /// How many observations there were.
    var count: UInt64 { counts.reduce(0, &+) }

    /// Adds the observations of `other`, which has the same bounds.
    mutating func add(_ other: Histogram) {
        precondition(other.bounds == bounds, "histograms with other buckets")
        for slot in counts.indices { counts[slot] &+= other.counts[slot] }
        sum &+= other.sum
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating beyond ±292 years.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(attoseconds / 1_000_000_000).overflow
            ? .max : whole + attoseconds / 1_000_000_000
    }
}
