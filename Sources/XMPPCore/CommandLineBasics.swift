/// The parts of command-line handling that `swiftletd` and `swiftlet` share
/// before either has real subcommands: `--help`, `--version`, and a plain
/// refusal for anything else.
public struct CommandLineBasics: Sendable {
    /// The program name shown in usage and error lines.
    public let program: String
    /// The usage text printed for `--help`.
    public let usage: String

    /// Creates the handler for one program.
    public init(program: String, usage: String) {
        self.program = program
        self.usage = usage
    }

    /// What to print and which exit status to use for `arguments`
    /// (without the program name).
    public func outcome(for arguments: [String]) -> (output: String, toStandardError: Bool, status: Int32) {
        switch arguments.first {
        case "--help", "-h", "help":
            return (usage, false, 0)
        case "--version", "-V", "version":
            return ("\(program) \(Swiftlet.version)", false, 0)
        case nil:
            return ("\(program): no command given\n\n\(usage)", true, 64)
        case let command?:
            return (
                "\(program): '\(command)' is not available yet in this version. Run '\(program) --help'.",
                true, 69
            )
        }
    }
}
