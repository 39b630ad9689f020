#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Log levels, most verbose first (the `log_level` setting).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug, info, notice, warning, error

    /// The name used in the config file and on each line.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where log lines go: standard error by default, a buffer in tests.
public protocol LogSink: Sendable {
    /// Writes one complete line (without its newline).
    func write(line: String)
}

/// Writes lines to standard error, one `write(2)` each so lines from
/// several threads never interleave.
public struct StandardErrorSink: LogSink {
    public init() {}

    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes(writeToStandardError)
    }
}

private func writeToStandardError(_ bytes: UnsafeRawBufferPointer) {
    _ = write(2, bytes.baseAddress, bytes.count)
}

/// A logger with a level and a label (`c2s#12 127.0.0.1:40312`). Lines are
/// `LEVEL label: message`; timestamps are left to the process supervisor
/// (journald and friends add their own).
///
/// Never log passwords, SASL payloads or message bodies.
public struct Logger: Sendable {
    /// The most verbose level written.
    public var level: LogLevel
    /// What the lines are about.
    public var label: String
    private let sink: any LogSink
    /// The last warning and error lines written, for the admin page;
    /// shared with every `labelled` copy.
    public let recentProblems: RecentProblems

    /// Creates a logger.
    public init(level: LogLevel = .info, label: String = "swiftletd", sink: any LogSink = StandardErrorSink()) {
        self.level = level
        self.label = label
        self.sink = sink
        self.recentProblems = RecentProblems()
    }

    /// The same logger about something narrower.
    public func labelled(_ label: String) -> Logger {
        var copy = self
        copy.label = label
        return copy
    }

    /// Writes `message` if `level` is enabled; the message is only built
    /// then. Control characters in it are escaped, so that text a client
    /// sent (an attribute with `&#10;`) cannot forge a line of its own.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        let line = "\(level.name) \(label): \(Self.escapingControls(message()))"
        sink.write(line: line)
        if level >= .warning { recentProblems.record(line) }
    }

    /// `text` with every control character (C0, DEL, C1, and the Unicode
    /// line and paragraph separators) written as `\u{…}`.
    static func escapingControls(_ text: String) -> String {
        func isControl(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
        }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                escaped.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
