import Foundation
import XMPPCore

let commandLine = CommandLineBasics(
    program: "swiftletd",
    usage: """
        swiftletd: a small single-domain XMPP server.

        Usage: swiftletd [--help] [--version]

        Options:
          -h, --help      Show this help.
          -V, --version   Show the version.
        """)
let outcome = commandLine.outcome(for: Array(CommandLine.arguments.dropFirst()))
FileHandle(fileDescriptor: outcome.toStandardError ? 2 : 1)
    .write((outcome.output + "\n").data(using: .utf8)!)
exit(outcome.status)
