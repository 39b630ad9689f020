import Foundation
import XMPPCore

let commandLine = CommandLineBasics(
    program: "swiftlet",
    usage: """
        swiftlet: an XMPP client for the command line.

        Usage: swiftlet [--help] [--version]

        Options:
          -h, --help      Show this help.
          -V, --version   Show the version.
        """)
let outcome = commandLine.outcome(for: Array(CommandLine.arguments.dropFirst()))
FileHandle(fileDescriptor: outcome.toStandardError ? 2 : 1)
    .write((outcome.output + "\n").data(using: .utf8)!)
exit(outcome.status)
