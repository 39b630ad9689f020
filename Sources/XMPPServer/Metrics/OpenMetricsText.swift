/// Writes the OpenMetrics text exposition format, version 1.0.0: metric
/// families one after another, each with its `# TYPE`, `# HELP` and
/// `# UNIT` lines and then its samples, and `# EOF` at the end.
///
/// The caller keeps a family's samples together and gives each family
/// once; names are ours (constants), so only label values and help texts
/// are escaped.
struct OpenMetricsText {
    /// The media type of the format, version 1.0.0.
    static let contentType = "application/openmetrics-text; version=1.0.0; charset=utf-8"

    /// The family types used here.
    enum FamilyType: String {
        case counter, gauge, histogram
    }

    private(set) var text = ""

    /// Starts the family `name`; with a unit, `name` must end with `_unit`
    /// (OpenMetrics requires it, and parsers check it).
    mutating func family(_ name: String, _ type: FamilyType, unit: String? = nil, help: String) {
        precondition(unit.map { name.hasSuffix("_" + $0) } ?? true, "\(name) does not end with its unit")
        text += "# TYPE \(name) \(type.rawValue)\n"
        if let unit { text += "# UNIT \(name) \(unit)\n" }
        text += "# HELP \(name) \(Self.escaped(help, quotes: false))\n"
    }

    /// One sample line: `name{label="value",…} value`.
    mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{"
            text += labels.map { "\($0.0)=\"\(Self.escaped($0.1, quotes: true))\"" }.joined(separator: ",")
            text += "}"
        }
        text += " \(value)\n"
    }

    /// A sample with a whole-number value.
    mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: some BinaryInteger) {
        sample(name, labels: labels, String(value))
    }

    /// The samples of one label set of a histogram family: cumulative
    /// `_bucket`s with `le`, then `_count` and `_sum`, in seconds.
    mutating func histogram(_ name: String, labels: [(String, String)] = [], _ histogram: Histogram) {
        var cumulative: UInt64 = 0
        for (index, count) in histogram.counts.enumerated() {
            cumulative += count
            let bound =
                index < histogram.bounds.count ? Self.seconds(nanoseconds: histogram.bounds[index]) : "+Inf"
            sample(name + "_bucket", labels: labels + [("le", bound)], cumulative)
        }
        sample(name + "_count", labels: labels, cumulative)
        sample(name + "_sum", labels: labels, Self.seconds(nanoseconds: histogram.sum))
    }

    /// Ends the exposition with `# EOF` and returns it.
    mutating func finish() -> String {
        text += "# EOF\n"
        return text
    }

    /// `nanoseconds` as a decimal number of seconds, exact and without an
    /// exponent (`0.00025`, `2`), as `le` values are best written.
    static func seconds(nanoseconds: Int64) -> String {
        let sign = nanoseconds < 0 ? "-" : ""
        let magnitude = nanoseconds.magnitude
        let whole = magnitude / 1_000_000_000
        let fraction = magnitude % 1_000_000_000
        guard fraction > 0 else { return "\(sign)\(whole)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 9 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return "\(sign)\(whole).\(digits)"
    }

    /// `value` with `\`, newlines and (in label values) `"` escaped
    /// (the `escaped-string` of the OpenMetrics 1.0 ABNF).
    static func escaped(_ value: String, quotes: Bool) -> String {
        // By scalar, not by Character: "\r\n" is one Character, unequal to "\n".
        let scalars = value.unicodeScalars
        guard scalars.contains(where: { $0 == "\\" || $0 == "\n" || (quotes && $0 == "\"") }) else { return value }
        var result = String.UnicodeScalarView()
        for scalar in scalars {
            switch scalar {
            case "\\": result += ["\\", "\\"]
            case "\n": result += ["\\", "n"]
            case "\"" where quotes: result += ["\\", "\""]
            default: result.append(scalar)
            }
        }
        return String(result)
    }
}
