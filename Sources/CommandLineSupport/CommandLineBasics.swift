import XMPPCore

/// The parts of command-line handling that `swiftletd` and `swiftlet` share
/// before either has real subcommands: `--help`, `--version`, and a plain
/// "not available yet" for everything else, with distinct exit statuses
/// (0 success, 64 usage error, 69 unavailable, as in BSD's sysexits.h).
public struct CommandLineBasics: Sendable {
    /// The program name shown in usage and error lines.
    public let program: String
    /// The usage text printed for `--help`.
    public let usage: String
    /// What running without arguments does, when that is a command of its
    /// own (`swiftletd` serves); `nil` makes no arguments a usage error.
    public let defaultCommand: String?

    /// Creates the handler for one program.
    public init(program: String, usage: String, defaultCommand: String? = nil) {
        self.program = program
        self.usage = usage
        self.defaultCommand = defaultCommand
    }

    /// What to print and which exit status to use for `arguments`
    /// (without the program name).
    public func outcome(for arguments: [String]) -> (output: String, toStandardError: Bool, status: Int32) {
        switch arguments.first ?? defaultCommand {
        case "--help", "-h", "help":
            return (usage, false, 0)
        case "--version", "-V", "version":
            return ("\(program) \(Swiftlet.version)", false, 0)
        case nil:
            return ("\(program): no command given\n\n\(usage)", true, 64)
        case let command?:
            let what = command == defaultCommand ? command : "'\(command)'"
            return ("\(program): \(what) is not available yet in this version. Run '\(program) --help'.", true, 69)
        }
    }
}
