import Foundation

/// The times `swiftlet` prints and reads: ISO 8601 in UTC (XEP-0082's
/// DateTime profile), so that output sorts as text and a script can feed
/// a printed time back to `history --before`.
public enum Timestamp {
    /// `2026-05-01T12:00:00Z`: whole seconds, for people.
    public static func seconds(_ date: Date) -> String {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)).formatted(wholeSeconds)
    }

    /// `2026-05-01T12:00:00.123Z`: milliseconds, the archive's precision,
    /// for JSON.
    public static func milliseconds(_ date: Date) -> String {
        let total = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, millis) = total.quotientAndRemainder(dividingBy: 1000)
        let (whole, fraction) = millis < 0 ? (seconds - 1, millis + 1000) : (seconds, millis)
        let text = Date(timeIntervalSince1970: Double(whole)).formatted(wholeSeconds)
        let digits = String(fraction)
        return text.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// Parses a date and time with a zone (`2026-05-01T12:00:00Z`, with or
    /// without fractional seconds, or an offset such as `+02:00`), or a
    /// date alone, which means its midnight UTC.
    public static func parse(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        if let date = try? wholeSeconds.parse(text) { return date }
        guard text.count == 10 else { return nil }
        return try? wholeSeconds.parse(text + "T00:00:00Z")
    }

    private static let wholeSeconds = Date.ISO8601FormatStyle()
}
