/// How one kind of setting is read from its text and written back: the
/// value forms of `swiftletd.conf`.
///
/// `format(parse(text))` reads back as the same value, so `check-config`
/// prints settings that can be pasted into a config file.
struct ConfigValueType<Value: Sendable>: Sendable {
    /// What a valid value looks like, for error messages.
    let expected: String
    /// The value of an empty setting (`key =`), or `nil` if it needs text.
    let emptyValue: Value?
    /// Reads one item.
    let parse: @Sendable (String) throws(ConfigValueError) -> Value
    /// Writes a value as one item.
    let format: @Sendable (Value) -> String
}

extension ConfigValueType where Value == String {
    /// Any text; empty is allowed (`certificate =` means "none").
    static let string = ConfigValueType(
        expected: "text", emptyValue: "", parse: { $0 }, format: ConfigFile.formatted)
}

extension ConfigValueType where Value == Int {
    /// A whole number, digits only: `4096`.
    static let integer = ConfigValueType(
        expected: "a whole number such as 4096", emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            guard let value = wholeNumber(text[...]) else {
                throw ConfigValueError(expected: "a whole number such as 4096", got: text)
            }
            return value
        },
        format: { String($0) })

    /// A size in bytes, with an optional binary unit: `65536`, `64KiB`,
    /// `1MiB`. KB and MB are refused because they are ambiguous.
    static let size = ConfigValueType(
        expected: sizeExpectation, emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            let (number, unit) = ConfigFile.numberAndUnit(text)
            guard let number, let factor = sizeUnits.first(where: { $0.name == unit })?.factor,
                case (let bytes, false) = number.multipliedReportingOverflow(by: factor)
            else { throw ConfigValueError(expected: sizeExpectation, got: text) }
            return bytes
        },
        format: { bytes in
            let unit = sizeUnits.last { $0.factor > 1 && bytes != 0 && bytes % $0.factor == 0 }
            return unit.map { "\(bytes / $0.factor)\($0.name)" } ?? String(bytes)
        })

    private static let sizeUnits = [
        (name: "", factor: 1), (name: "B", factor: 1), (name: "KiB", factor: 1 << 10),
        (name: "MiB", factor: 1 << 20), (name: "GiB", factor: 1 << 30),
    ]
    private static let sizeExpectation =
        "a size such as 65536, 64KiB or 1MiB (a bare number is bytes; units B, KiB, MiB, GiB)"
}

extension ConfigValueType where Value == Duration {
    /// A duration in whole units: `500ms`, `30s`, `5m`, `2h`, `1d`; a bare
    /// number is seconds.
    static let duration = ConfigValueType(
        expected: durationExpectation, emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            let (number, unit) = ConfigFile.numberAndUnit(text)
            guard let number, let scale = durationUnits.first(where: { $0.name == unit })?.milliseconds,
                case (let milliseconds, false) = number.multipliedReportingOverflow(by: scale)
            else { throw ConfigValueError(expected: durationExpectation, got: text) }
            return .milliseconds(milliseconds)
        },
        format: { duration in
            let (seconds, attoseconds) = duration.components
            let milliseconds = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
            if milliseconds == 0 { return "0s" }
            let unit = durationUnits.last { $0.name != "" && milliseconds % $0.milliseconds == 0 }
            return unit.map { "\(milliseconds / $0.milliseconds)\($0.name)" } ?? "\(milliseconds)ms"
        })

    private static let durationUnits = [
        (name: "ms", milliseconds: 1), (name: "", milliseconds: 1000), (name: "s", milliseconds: 1000),
        (name: "m", milliseconds: 60_000), (name: "h", milliseconds: 3_600_000), (name: "d", milliseconds: 86_400_000),
    ]
    private static let durationExpectation =
        "a duration such as 30s, 5m or 2h (a bare number is seconds; units ms, s, m, h, d)"
}

extension ConfigValueType where Value == Bool {
    /// `yes`/`no`, `true`/`false` or `on`/`off`, in any case.
    static let boolean = ConfigValueType(
        expected: "yes or no", emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            switch text.lowercased() {
            case "yes", "true", "on": return true
            case "no", "false", "off": return false
            default: throw ConfigValueError(expected: "yes or no (also true/false, on/off)", got: text)
            }
        },
        format: { $0 ? "yes" : "no" })
}

extension ConfigValueType {
    /// One of a fixed set of names.
    static func choice(_ cases: [Value], name: @escaping @Sendable (Value) -> String) -> ConfigValueType {
        let names = cases.map(name)
        let expected = names.dropLast().joined(separator: ", ") + " or " + names.last!
        return ConfigValueType(
            expected: expected, emptyValue: nil,
            parse: { text throws(ConfigValueError) in
                guard let index = names.firstIndex(of: text.lowercased()) else {
                    throw ConfigValueError(expected: expected, got: text)
                }
                return cases[index]
            },
            format: name)
    }

    /// `choice` over an enum whose raw values are the names.
    static func choice(_ type: Value.Type) -> ConfigValueType
    where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
        choice(Array(type.allCases), name: \.rawValue)
    }
}
