/// The syntax of `swiftletd.conf`, before any key is interpreted.
///
/// ```
/// # A whole-line comment.
/// domain = ydc.local            # a trailing comment
/// listen = 127.0.0.1:5222, [::1]:5222
/// certificate = "/etc/certs/#1.pem"
/// ```
///
/// - One `key = value` per line; blank lines and lines starting with `#`
///   are ignored. Outside quotes, `#` always starts a comment.
/// - A value is a comma-separated list of items (most keys take exactly
///   one). Spaces around items are dropped.
/// - An item in double quotes keeps `#`, `,` and leading or trailing spaces;
///   inside quotes `\"` is a quote and `\\` a backslash, and no other escape
///   exists.
/// - `key =` with nothing after it is an empty list (or an empty string).
///
/// Keys and values are checked by `ServerConfig`, which knows the keys.
struct ConfigFile: Sendable, Equatable {
    /// One `key = value` line.
    struct Entry: Sendable, Equatable {
        /// The key as written.
        var key: String
        /// The items of the value, unquoted.
        var items: [String]
        /// The line number, from 1.
        var line: Int
    }

    /// The entries in file order.
    var entries: [Entry]

    /// Splits `text` into entries.
    ///
    /// - Parameter name: The file name used in errors.
    /// - Throws: `ConfigError` at the first line that is neither blank, a
    ///   comment, nor a well-formed `key = value`.
    init(parsing text: String, name: String) throws(ConfigError) {
        entries = []
        // "\r\n" is one Character, so Windows line ends count once.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        for (index, line) in lines.enumerated() {
            do {
                if let entry = try Self.entry(in: line, line: index + 1) { entries.append(entry) }
            } catch {
                throw ConfigError(location: .line(file: name, line: index + 1), error.message)
            }
        }
    }

    /// The entry on one line, or `nil` for a blank or comment line.
    static func entry(in line: Substring, line number: Int) throws(ConfigValueError) -> Entry? {
        let text = trim(line)
        if text.isEmpty || text.first == "#" { return nil }
        guard let equals = text.firstIndex(of: "=") else {
            throw ConfigValueError("expected 'key = value', a comment or a blank line")
        }
        let key = trim(text[..<equals])
        guard let first = key.unicodeScalars.first, first.properties.isAlphabetic,
            key.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || "0123456789_-.".unicodeScalars.contains($0) })
        else {
            throw ConfigValueError(
                "expected 'key = value': \(ConfigValueError.quoted(String(key))) is not a key "
                    + "(keys are made of letters, digits and '_')")
        }
        return Entry(key: String(key), items: try items(in: text[text.index(after: equals)...]), line: number)
    }

    /// The comma-separated items of a value, up to an unquoted `#`.
    static func items(in value: Substring) throws(ConfigValueError) -> [String] {
        var rest = trimLeading(value)
        if rest.isEmpty || rest.first == "#" { return [] }
        var items: [String] = []
        while true {
            if rest.first == "\"" {
                let (item, after) = try quotedItem(rest)
                items.append(item)
                rest = trimLeading(after)
            } else {
                let end = rest.firstIndex { $0 == "," || $0 == "#" } ?? rest.endIndex
                let item = trim(rest[..<end])
                if item.isEmpty { throw ConfigValueError("empty item in a comma-separated list") }
                items.append(String(item))
                rest = rest[end...]
            }
            if rest.isEmpty || rest.first == "#" { return items }
            guard rest.first == "," else {
                throw ConfigValueError(
                    "unexpected \(ConfigValueError.quoted(String(trim(rest)))) after a quoted value")
            }
            rest = trimLeading(rest.dropFirst())
            if rest.isEmpty || rest.first == "#" {
                throw ConfigValueError("the list ends with ','; remove it or add an item")
            }
        }
    }

    /// Reads a quoted item at the start of `text`; returns it unescaped and
    /// the text after the closing quote.
    static func quotedItem(_ text: Substring) throws(ConfigValueError) -> (String, Substring) {
        var result = ""
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            switch character {
            case "\"":
                return (result, text[index...])
            case "\\":
                guard index < text.endIndex, text[index] == "\"" || text[index] == "\\" else {
                    let escape = index < text.endIndex ? "\\\(text[index])" : "\\"
                    throw ConfigValueError(
                        "unknown escape \(ConfigValueError.quoted(escape)) in a quoted value; "
                            + "only \\\" and \\\\ are allowed")
                }
                result.append(text[index])
                index = text.index(after: index)
            default:
                result.append(character)
            }
        }
        throw ConfigValueError("missing closing '\"' in a quoted value")
    }

    /// `item` as the file format writes it: bare when it reads back the
    /// same, else quoted with `"` and `\` escaped.
    static func formatted(_ item: String) -> String {
        let needsQuotes =
            item.isEmpty || item.first == "\"" || item.contains("#") || item.contains(",")
            || trim(item[...]).count != item.count
        guard needsQuotes else { return item }
        var result = "\""
        for character in item {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result + "\""
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trim(_ text: Substring) -> Substring {
        let start = text.firstIndex { !isBlank($0) } ?? text.endIndex
        let end = text[start...].lastIndex { !isBlank($0) }.map(text.index(after:)) ?? start
        return text[start..<end]
    }

    /// `text` without leading spaces and tabs.
    static func trimLeading(_ text: Substring) -> Substring {
        text[(text.firstIndex { !isBlank($0) } ?? text.endIndex)...]
    }

    private static func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }

    /// Splits `30s` or `30 s` into 30 and `s`; the number is `nil` when the
    /// text does not start with digits.
    static func numberAndUnit(_ text: String) -> (Int?, String) {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        return (wholeNumber(digits), String(trim(text[digits.endIndex...])))
    }
}
