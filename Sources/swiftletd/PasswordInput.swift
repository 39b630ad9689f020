import Foundation

/// Reads a password for the admin commands: from the terminal with echo
/// off (twice, to catch typos), or one line from standard input when it is
/// not a terminal (scripts: `echo secret | swiftletd adduser alice`).
/// Never from the command line, where other users could see it.
enum PasswordInput {
    static func read(confirm: Bool) throws -> String {
        guard isatty(STDIN_FILENO) != 0 else {
            guard let line = Swift.readLine(strippingNewline: true) else {
                throw PasswordInputError("no password on standard input")
            }
            return line
        }
        let password = try prompt("Password: ")
        if confirm, try prompt("Again: ") != password {
            throw PasswordInputError("the passwords differ")
        }
        return password
    }

    /// Prints `text` and reads a line with terminal echo off.
    private static func prompt(_ text: String) throws -> String {
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

struct PasswordInputError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
