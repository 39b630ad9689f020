import CommandLineSupport
import Foundation
import XMPPCore
import XMPPServer

/// `swiftletd`: parse the command line, load the config, call XMPPServer.
/// Exit statuses follow BSD's sysexits: 64 usage, 65 bad config or data,
/// 69 unavailable, 74 I/O (cannot start).

let usage = """
    swiftletd: a small single-domain XMPP server.

    Usage:
      swiftletd [run] [OPTIONS]        Serve (the default command).
      swiftletd check-config [OPTIONS] Print the settings in force and why.
      swiftletd adduser USER [OPTIONS] Create an account; the password is read
                                       from the terminal, or from standard input.
      swiftletd passwd USER [OPTIONS]  Set an account's password (read the same way).
      swiftletd deluser USER [OPTIONS] Delete an account.
      swiftletd users [OPTIONS]        List the accounts.
      swiftletd --help | --version

    Options:
    \(ServerOptions.help)
    """

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("swiftletd: \(message)\n".utf8))
    exit(status)
}

let rawArguments = Array(CommandLine.arguments.dropFirst())
if rawArguments.contains("--help") || rawArguments.contains("-h") || rawArguments.first == "help" {
    print(usage)
    exit(0)
}
if rawArguments.contains("--version") || rawArguments.contains("-V") || rawArguments.first == "version" {
    print("swiftletd \(Swiftlet.version)")
    exit(0)
}

let options: ServerOptions
do {
    options = try ServerOptions.parse(rawArguments)
} catch {
    fail("\(error.message)\n\n\(usage)", status: 64)
}
let config: ServerConfig
do {
    config = try ServerConfig.load(from: options.configPath, overrides: options.overrides)
} catch {
    fail("\(error)", status: 65)
}

let command = options.arguments.first ?? "run"
let operands = Array(options.arguments.dropFirst())

/// The single USER operand of an account command.
func user() -> String {
    guard operands.count == 1 else { fail("\(command) takes exactly one USER\n\n\(usage)", status: 64) }
    return operands[0]
}

/// Runs an admin command, turning its errors into a message and status 65.
func admin(_ body: (Admin) throws -> Void) {
    do {
        try body(try Admin(config: config))
    } catch let error as AdminError {
        fail(error.description, status: 65)
    } catch let error as PasswordInputError {
        fail(error.description, status: 65)
    } catch {
        fail("cannot open the database in \(config.dataDirectory): \(error)", status: 74)
    }
}

switch command {
case "run":
    guard operands.isEmpty else { fail("run takes no operands\n\n\(usage)", status: 64) }
    let log = Logger(level: config.logLevel)
    do {
        let server = try Server(config: config, log: log)
        try server.start()
        server.installSignalHandlers()
        server.waitUntilStopped()
    } catch {
        fail("cannot start: \(error)", status: 74)
    }
case "check-config":
    print(checkConfigReport(config), terminator: "")
case "adduser":
    let name = user()
    admin { try $0.addUser(name, password: PasswordInput.read(confirm: true)) }
    print("created \(name)")
case "passwd":
    let name = user()
    admin { try $0.setPassword(name, password: PasswordInput.read(confirm: true)) }
    print("password changed for \(name)")
case "deluser":
    let name = user()
    admin { try $0.deleteUser(name) }
    print("deleted \(name)")
case "users":
    admin { admin in
        for name in try admin.usernames() { print(name) }
    }
default:
    fail("unknown command '\(command)'\n\n\(usage)", status: 64)
}
