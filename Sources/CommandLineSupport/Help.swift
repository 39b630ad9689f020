import TerminalSupport
import XMPPCore

/// The texts of `swiftlet --help` and `swiftlet help COMMAND`, made from
/// the command and option specs so that they cannot drift apart.
enum Help {
    /// The program's help: commands, global options, files, exit statuses.
    static var main: String {
        """
        swiftlet \(Swiftlet.version): an XMPP client for the command line.

        Usage: swiftlet COMMAND [OPTIONS] [OPERANDS]
               swiftlet help COMMAND   (or COMMAND --help)
               swiftlet --version

        Commands:
        \(table(Command.allCases.map { (usage(of: $0), $0.spec.summary) }))

        Global options (any command):
        \(table(GlobalOptions.specs.map { (usage(of: $0), $0.help) }))

        \(wrap("""
            Start with 'swiftlet register JID' or 'swiftlet login JID'; later commands \
            use the saved login of --account, or of the account logged in last. Only \
            listen, presence, chat and room join make you available (and join the \
            rooms bookmarked with autojoin): the other commands connect \
            unseen, and messages sent to you wait on the server for the next listen \
            or chat.
            """))

        \(wrap("""
            Files: HOME is --home, else $SWIFTLET_HOME, else $XDG_DATA_HOME/swiftlet, \
            else ~/.local/share/swiftlet. HOME/accounts/JID.json holds a saved login \
            (mode 600), HOME/archive.sqlite the messages sent and received.
            """))

        Exit status:
        \(ExitStatus.table)
        """
    }

    /// The commands of `group` (such as `roster`), in order.
    static func actions(of group: String) -> [Command] {
        Command.allCases.filter { $0.rawValue.hasPrefix(group + " ") }
    }

    /// The help of a group's actions together.
    static func group(_ group: String) -> String {
        """
        Usage: swiftlet \(group) ACTION [OPTIONS] [OPERANDS]

        \(table(actions(of: group).map { (usage(of: $0), $0.spec.summary) }))

        See 'swiftlet help \(group) ACTION' for an action's options.
        """
    }

    /// The help of one command.
    static func text(for command: Command) -> String {
        let spec = command.spec
        var text = """
            Usage: swiftlet \(usage(of: command))\(spec.options.isEmpty ? "" : " [OPTIONS]")

            \(spec.summary)

            \(wrap(spec.details))
            """
        if !spec.options.isEmpty {
            text += "\n\nOptions:\n" + table(spec.options.map { (usage(of: $0), $0.help) })
        }
        text += "\n\n" + wrap("""
            Global options: \(GlobalOptions.specs.map(\.name).joined(separator: ", ")); \
            see 'swiftlet --help', which also lists the exit statuses.
            """)
        return text
    }

    /// `send JID TEXT...`
    static func usage(of command: Command) -> String {
        ([command.rawValue] + command.spec.operands).joined(separator: " ")
    }

    /// `--limit N`
    static func usage(of option: OptionSpec) -> String {
        option.name + (option.value.map { " " + $0 } ?? "")
    }

    /// Two columns, the first padded, each row indented by two spaces.
    static func table(_ rows: [(String, String)]) -> String {
        let width = min(rows.map(\.0.count).max() ?? 0, 28) + 2
        return rows.map { left, right in
            let padding = max(width - left.count, 2)
            return "  " + left + String(repeating: " ", count: padding) + right
        }.joined(separator: "\n")
    }

    /// `text` wrapped at 78 columns between words.
    static func wrap(_ text: String) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > 78 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
