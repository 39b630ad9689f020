import CommandLineSupport
import Foundation

let commandLine = CommandLineBasics(
    program: "swiftletd",
    usage: """
        swiftletd: a small single-domain XMPP server.

        Usage: swiftletd [--help] [--version]

        Without arguments swiftletd serves (not available yet in this version).

        Options:
          -h, --help      Show this help.
          -V, --version   Show the version.
        """,
    defaultCommand: "serving")
let outcome = commandLine.outcome(for: Array(CommandLine.arguments.dropFirst()))
FileHandle(fileDescriptor: outcome.toStandardError ? 2 : 1).write(Data((outcome.output + "\n").utf8))
exit(outcome.status)
