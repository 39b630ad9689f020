import Foundation

/// Reads a password for `swiftletd adduser`, `swiftlet register` and the
/// like: from the terminal with echo off (twice when confirming, to catch
/// typos), or the first line of standard input when it is not a terminal
/// (scripts: `echo secret | swiftlet login alice@example.com`). Never from
/// the command line, where other users could see it.
public enum PasswordInput {
    /// Reads one password.
    /// - Parameters:
    ///   - prompt: What to ask on the terminal.
    ///   - confirm: Whether a terminal user types it twice.
    /// - Throws: `PasswordInputError` when there is no line to read or the
    ///   two differ.
    public static func read(prompt: String = "Password: ", confirm: Bool) throws(PasswordInputError) -> String {
        guard isatty(STDIN_FILENO) != 0 else {
            guard let line = Swift.readLine(strippingNewline: true) else {
                throw PasswordInputError("no password on standard input")
            }
            return line
        }
        let password = try silentLine(prompt)
        if confirm, try silentLine("Again: ") != password {
            throw PasswordInputError("the passwords differ")
        }
        return password
    }

    /// Prints `text` on standard error and reads a line with terminal echo off.
    ///
    /// The corresponding C functions are `tcgetattr` and `tcsetattr`.
    private static func silentLine(_ text: String) throws(PasswordInputError) -> String {
        FileHandle.standardError.write(Data(text.utf8))
        var saved = termios()
        tcgetattr(STDIN_FILENO, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        guard let line = Swift.readLine(strippingNewline: true) else {
            throw PasswordInputError("no password entered")
        }
        return line
    }
}

/// Why no password could be read.
public struct PasswordInputError: Error, Sendable, CustomStringConvertible {
    public let description: String

    /// An error with this message.
    public init(_ description: String) { self.description = description }
}
