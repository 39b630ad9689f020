/// The DateTime profile of XEP-0082 (XMPP Date and Time Profiles, §3.2):
/// `CCYY-MM-DDThh:mm:ss[.sss]TZD`, where TZD is `Z` or `±hh:mm`, as in
/// delay stamps (XEP-0203) and archive queries (XEP-0313 §4.1.2).
///
/// Times are whole milliseconds since 1970-01-01 00:00 UTC, the unit the
/// stores keep. Written by hand rather than with `ISO8601DateFormatter`,
/// which is costly to create and whose leniency differs between platforms.
public enum DateTimeProfile {
    /// `milliseconds` as `2010-07-10T23:08:25.123Z`: always UTC, always
    /// with milliseconds (XEP-0082 §3.2 allows the fraction).
    public static func string(millisecondsSince1970 milliseconds: Int) -> String {
        let (days, inDay) = floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let hour = inDay / 3_600_000
        let minute = inDay / 60_000 % 60
        let second = inDay / 1000 % 60
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T"
            + "\(padded(hour, 2)):\(padded(minute, 2)):\(padded(second, 2)).\(padded(inDay % 1000, 3))Z"
    }

    /// The time `text` names, in milliseconds since 1970 (digits of the
    /// fraction beyond the third are dropped), or `nil` when it is not a
    /// valid DateTime: wrong shape, a field out of range, a day the month
    /// does not have, or no time zone.
    public static func milliseconds(from text: String) -> Int? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.number(digits: 2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.number(digits: 2), scanner.take(UInt8(ascii: "T")),
            let hour = scanner.number(digits: 2), scanner.take(UInt8(ascii: ":")),
            let minute = scanner.number(digits: 2), scanner.take(UInt8(ascii: ":")),
            let second = scanner.number(digits: 2)
        else { return nil }
        var fraction = 0
        if scanner.take(UInt8(ascii: ".")) {
            let digits = scanner.digits()
            guard !digits.isEmpty else { return nil }
            for digit in (digits + [0, 0, 0]).prefix(3) { fraction = fraction * 10 + Int(digit) }
        }
        var offset = 0
        if !scanner.take(UInt8(ascii: "Z")) {
            guard let sign = scanner.next(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
                let hours = scanner.number(digits: 2), scanner.take(UInt8(ascii: ":")),
                let minutes = scanner.number(digits: 2), hours <= 23, minutes <= 59
            else { return nil }
            offset = (hours * 60 + minutes) * 60_000 * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        guard scanner.isAtEnd, (1...12).contains(month), (1...daysIn(month, of: year)).contains(day),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        let days = self.days(fromCivil: year, month, day)
        return days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offset
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, after H. Hinnant's
    // "chrono-compatible low-level date algorithms")

    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Quotient and remainder rounding toward negative infinity, so times
    /// before 1970 land on the right day.
    private static func floorDivide(_ value: Int, _ divisor: Int) -> (Int, Int) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    private static func padded(_ number: Int, _ width: Int) -> String {
        let digits = String(number)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Reads ASCII bytes left to right.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { position == bytes.count }

        mutating func next() -> UInt8? {
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// The values of the decimal digits from here on, possibly none.
        mutating func digits() -> [UInt8] {
            var values: [UInt8] = []
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                values.append(bytes[position] - UInt8(ascii: "0"))
                position += 1
            }
            return values
        }

        /// Exactly `digits` decimal digits as a number.
        mutating func number(digits count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let byte = next(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
    }
}
