import Foundation

/// A setting given on the command line, applied after the config file with
/// the same rules as the file's `key = value`.
public struct ConfigOverride: Sendable, Equatable {
    /// The option as typed, for errors: `--tls`.
    public var option: String
    /// The config key it sets: `tls`.
    public var key: String
    /// The value's items (several for a repeated `--listen`).
    public var values: [String]

    /// Creates an override of `key`.
    public init(option: String, key: String, values: [String]) {
        self.option = option
        self.key = key
        self.values = values
    }
}

extension ServerConfig {
    /// Loads the configuration: the defaults, then the file at `path` if
    /// one is given, then `overrides`, then validation.
    ///
    /// No file is searched for: without `path` the result is the defaults
    /// plus `overrides`, so the server starts with zero setup.
    ///
    /// - Throws: `ConfigError` if the file cannot be read (a missing file
    ///   included), a line is malformed, a key is unknown or repeated, a
    ///   value has the wrong form, or the result is invalid.
    public static func load(from path: String?, overrides: [ConfigOverride] = []) throws(ConfigError) -> ServerConfig {
        guard let path else { return try parse("", fileName: "", overrides: overrides) }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason =
                FileManager.default.fileExists(atPath: path)
                ? "it exists but cannot be read as UTF-8 text (check its permissions)" : "no such file"
            throw ConfigError(location: .file(path), "cannot read the config file: \(reason)")
        }
        return try parse(text, fileName: path, overrides: overrides)
    }

    /// Reads config text named `fileName` in errors, applies `overrides`,
    /// and validates, like `load(from:overrides:)`.
    ///
    /// - Throws: `ConfigError` with the line and key at fault.
    public static func parse(_ text: String, fileName: String, overrides: [ConfigOverride] = []) throws(ConfigError)
        -> ServerConfig
    {
        var config = ServerConfig()
        var origins: [String: ConfigError.Location] = [:]
        for entry in try ConfigFile(parsing: text, name: fileName).entries {
            let location = ConfigError.Location.line(file: fileName, line: entry.line)
            if case .line(_, let first)? = origins[entry.key] {
                throw ConfigError(location: location, key: entry.key, "set twice (first on line \(first))")
            }
            try config.apply(entry.key, entry.items, at: location)
            origins[entry.key] = location
        }
        for override in overrides {
            let location = ConfigError.Location.option(override.option)
            try config.apply(override.key, override.values, at: location)
            origins[override.key] = location
        }
        do {
            return try config.validated()
        } catch {
            var located = error
            located.location = error.key.flatMap { origins[$0] }
            throw located
        }
    }

    /// Sets the field of `key` from `items`.
    private mutating func apply(_ key: String, _ items: [String], at location: ConfigError.Location)
        throws(ConfigError)
    {
        guard let configKey = Self.keysByName[key] else {
            let hint = Self.suggestion(for: key).map { "; did you mean '\($0)'?" } ?? ""
            throw ConfigError(location: location, key: key, "unknown key\(hint)")
        }
        do {
            try configKey.apply(&self, items)
        } catch {
            throw ConfigError(location: location, key: key, error.message)
        }
    }
}
