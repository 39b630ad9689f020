import CommandLineSupport
import Foundation

let commandLine = CommandLineBasics(
    program: "swiftlet",
    usage: """
        swiftlet: an XMPP client for the command line.

        Usage: swiftlet [--help] [--version] COMMAND

        Commands (not available yet in this version): register, login, send,
        listen, chat, roster, presence, history, recent.

        Options:
          -h, --help      Show this help.
          -V, --version   Show the version.
        """)
let outcome = commandLine.outcome(for: Array(CommandLine.arguments.dropFirst()))
FileHandle(fileDescriptor: outcome.toStandardError ? 2 : 1).write(Data((outcome.output + "\n").utf8))
exit(outcome.status)
