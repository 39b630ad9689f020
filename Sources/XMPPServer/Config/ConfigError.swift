/// Why the configuration cannot be used: where the bad setting came from,
/// which key it was, and what was expected instead.
///
/// `description` is the line `swiftletd` prints, for example
/// `etc/swiftletd.conf:12: idle_timeout: must be more than 150s, ...`.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where a setting came from.
    public enum Location: Sendable, Equatable {
        /// A line of a config file (lines count from 1).
        case line(file: String, line: Int)
        /// A config file as a whole, for example one that cannot be read.
        case file(String)
        /// A command-line option such as `--tls`.
        case option(String)
    }

    /// Where the setting came from; `nil` for a value set in code (or a
    /// default), which has no place in a file.
    public var location: Location?
    /// The config file key involved, such as `idle_timeout`, when there is one.
    public var key: String?
    /// What is wrong and what was expected.
    public var message: String

    /// Creates an error.
    public init(location: Location? = nil, key: String? = nil, _ message: String) {
        self.location = location
        self.key = key
        self.message = message
    }

    /// `file:line: key: message`, `option --tls: message`, `file: message` or
    /// `key: message`.
    public var description: String {
        let keyPrefix = key.map { "\($0): " } ?? ""
        switch location {
        case .line(let file, let line)?: return "\(file):\(line): \(keyPrefix)\(message)"
        case .file(let file)?: return "\(file): \(keyPrefix)\(message)"
        case .option(let option)?: return "option \(option): \(message)"
        case nil: return keyPrefix + message
        }
    }
}

/// A value that does not have the form its key needs; `ServerConfig`
/// turns it into a `ConfigError` with the location and key.
struct ConfigValueError: Error, Sendable, Equatable {
    /// What was expected, and what was found.
    var message: String

    init(_ message: String) {
        self.message = message
    }

    /// "expected \(what), got 'text'".
    init(expected what: String, got text: String) {
        self.message = "expected \(what), got \(ConfigValueError.quoted(text))"
    }

    /// `text` in single quotes, as error messages show the offending value.
    static func quoted(_ text: String) -> String { "'\(text)'" }
}
