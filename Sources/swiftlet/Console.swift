import Foundation

/// Where `swiftlet` writes: results on standard output, one `write` per
/// line so that a reader of a pipe sees each line at once; errors and
/// progress on standard error, progress only when that is a terminal.
enum Console {
    /// Whether standard error is a terminal, where progress notes help a
    /// person waiting; a script gets none.
    static let showsProgress = isatty(STDERR_FILENO) != 0

    /// Writes `text` and a newline to standard output.
    static func print(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes `text` to standard error when it is a terminal.
    static func progress(_ text: String) {
        if showsProgress { write(text + "\n", to: STDERR_FILENO) }
    }

    /// Writes `text` and a newline to standard error, terminal or not: what
    /// `--verbose` asked for.
    static func note(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    /// Writes `swiftlet: message` to standard error.
    static func error(_ message: String) {
        write("swiftlet: \(message)\n", to: STDERR_FILENO)
    }

    /// Writes all of `text`, retrying after interruptions and short writes.
    ///
    /// The corresponding C function is `write`.
    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
