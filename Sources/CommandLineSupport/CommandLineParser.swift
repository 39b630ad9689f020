/// What the command line asks for.
public enum ParsedCommandLine: Sendable {
    /// Print this help text and succeed.
    case help(String)
    /// Print the version and succeed.
    case version
    /// Run a command.
    case run(Invocation)
}

/// Reads `swiftlet`'s command line.
///
/// Options may come before or after the command, as `--name value` or
/// `--name=value`; `--` ends them, so that `swiftlet send bob -- --hi--`
/// sends `--hi--`. `-h`/`--help` anywhere asks for help on the command,
/// `help COMMAND` too.
public enum CommandLineParser {
    /// Parses `arguments` (without the program name).
    /// - Throws: `CommandFailure`: `.usage` for anything the commands do
    ///   not take, `.badData` for a malformed JID in `--account`.
    public static func parse(_ arguments: [String]) throws(CommandFailure) -> ParsedCommandLine {
        var words: [String] = []
        var options: [(name: String, value: String)] = []
        var wantsHelp = false
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--":
                words += remaining
                remaining = []
            case "-h", "--help":
                wantsHelp = true
            case "-V", "--version":
                return .version
            case _ where argument.hasPrefix("--"):
                let name = String(argument.prefix { $0 != "=" })
                guard let takesValue = optionTakesValue[name] else {
                    throw .usage("unknown option \(name); see 'swiftlet --help'")
                }
                if let equals = argument.firstIndex(of: "=") {
                    guard takesValue else { throw .usage("\(name) takes no value") }
                    options.append((name, String(argument[argument.index(after: equals)...])))
                } else if takesValue {
                    guard let value = remaining.popFirst() else { throw .usage("\(name) needs a value") }
                    options.append((name, value))
                } else {
                    options.append((name, ""))
                }
            case _ where argument.hasPrefix("-") && argument != "-":
                throw .usage("unknown option \(argument); see 'swiftlet --help'")
            default:
                words.append(argument)
            }
        }
        if words.first == "help" {
            words.removeFirst()
            wantsHelp = true
        }
        guard let first = words.first else {
            if wantsHelp { return .help(Help.main) }
            throw .usage("no command given; see 'swiftlet --help'")
        }
        let command: Command
        if Command.groups.contains(first) {
            guard words.count > 1 else {
                if wantsHelp { return .help(Help.group(first)) }
                let actions = Help.actions(of: first).map { $0.rawValue.dropFirst(first.count + 1) }
                throw .usage("\(first) needs an action: \(actions.joined(separator: ", "))")
            }
            guard let action = Command(rawValue: "\(first) \(words[1])") else {
                throw .usage("unknown \(first) action '\(words[1])'; see 'swiftlet help \(first)'")
            }
            command = action
            words.removeFirst(2)
        } else {
            guard let named = Command(rawValue: first), !first.contains(" ") else {
                throw .usage("unknown command '\(first)'; see 'swiftlet --help'")
            }
            command = named
            words.removeFirst()
        }
        if wantsHelp { return .help(Help.text(for: command)) }
        return .run(try Invocation(command: command, operands: words, options: options))
    }

    /// Whether each known option takes a value; an option means the same
    /// in every command that has it.
    static let optionTakesValue: [String: Bool] = {
        var table: [String: Bool] = [:]
        for option in GlobalOptions.specs + Command.allCases.flatMap(\.spec.options) {
            let takesValue = option.value != nil
            precondition(table[option.name].map { $0 == takesValue } ?? true, "\(option.name) is defined twice")
            table[option.name] = takesValue
        }
        return table
    }()
}
