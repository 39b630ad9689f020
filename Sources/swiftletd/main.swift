import Foundation
import SQLiteKit
import TerminalSupport
import XMPPCore
import XMPPServer
import XMPPStorage

/// `swiftletd`: parse the command line, load the config, call XMPPServer.
/// Exit statuses are `ExitStatus`'s (BSD's sysexits): `.usage` for the
/// command line, `.badData` for the config or an admin command's data,
/// `.localFile` (I/O) when the server or the database cannot start.

let usage = """
    swiftletd: a small single-domain XMPP server.

    Usage:
      swiftletd [run] [OPTIONS]        Serve (the default command).
      swiftletd demo [OPTIONS]         Serve demo accounts alice, bob and carol (password
                                       "swiftlet"), already contacts, with messages waiting;
                                       data in a temporary directory unless --data-dir is
                                       given; loopback only unless --listen says otherwise
                                       (e.g. --listen 0.0.0.0:5222 for a phone on the LAN,
                                       with --i-know-demo-passwords-are-public).
      swiftletd check-config [OPTIONS] Print the settings in force and why.
      swiftletd trust [--install | --uninstall] [OPTIONS]
                                       Print how to trust the local CA (this machine,
                                       Firefox, the iOS Simulator, a phone); with --install
                                       do what this machine permits, --uninstall undoes it.
      swiftletd adduser USER [OPTIONS] Create an account; the password is read
                                       from the terminal, or from standard input.
      swiftletd passwd USER [OPTIONS]  Set an account's password (read the same way).
      swiftletd deluser USER [OPTIONS] Delete an account.
      swiftletd users [OPTIONS]        List the accounts.
      swiftletd --help | --version

    Options:
    \(ServerOptions.help)
    """

func fail(_ message: String, status: ExitStatus) -> Never {
    FileHandle.standardError.write(Data("swiftletd: \(message)\n".utf8))
    exit(status.rawValue)
}

// Whatever this process creates (the database, keys, uploads, a demo's
// directory) is for its own user only, whatever the mode of the directory
// it lands in; no file then passes through a readable mode before being
// tightened. Set before anything creates a file.
_ = umask(0o077)

let rawArguments = Array(CommandLine.arguments.dropFirst())
if rawArguments.contains("--help") || rawArguments.contains("-h") || rawArguments.first == "help" {
    print(usage)
    exit(ExitStatus.success.rawValue)
}
if rawArguments.contains("--version") || rawArguments.contains("-V") || rawArguments.first == "version" {
    print("swiftletd \(Swiftlet.version)")
    print("libraries: \(XMLStreamParser.libraryDescription); \(Database.libraryDescription); \(TLSContext.libraryDescription)")
    exit(ExitStatus.success.rawValue)
}

let options: ServerOptions
do {
    options = try ServerOptions.parse(rawArguments)
} catch {
    fail("\(error.message)\n\n\(usage)", status: .usage)
}
let config: ServerConfig
do {
    config = try ServerConfig.load(from: options.configPath, overrides: options.overrides)
} catch {
    fail("\(error)", status: .badData)
}

let command = options.arguments.first ?? "run"
let operands = Array(options.arguments.dropFirst())
if options.trustAction != nil, command != "trust" {
    fail("--install and --uninstall are for trust\n\n\(usage)", status: .usage)
}

/// The single USER operand of an account command.
func user() -> String {
    guard operands.count == 1 else { fail("\(command) takes exactly one USER\n\n\(usage)", status: .usage) }
    return operands[0]
}

/// Runs an admin command, turning its errors into a message and `.badData`.
func admin(_ body: (Admin) throws -> Void) {
    do {
        let admin = try Admin(config: config)
        defer { admin.close() }
        try body(admin)
    } catch let error as AdminError {
        fail(error.description, status: .badData)
    } catch let error as PasswordInputError {
        fail(error.description, status: .badData)
    } catch {
        fail("cannot open the database in \(config.dataDirectory): \(error)", status: .localFile)
    }
}

/// `swiftletd demo`: seeds the demo data, serves, prints the banner, and
/// deletes a temporary data directory when stopped.
func runDemo() {
    var demoConfig = config
    let isTemporary = !options.overrides.contains { $0.option == "--data-dir" }
    if isTemporary {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("swiftletd-demo-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { fail("cannot create a temporary directory", status: .localFile) }
        demoConfig.dataDirectory = String(cString: bytes)
    }
    if !options.overrides.contains(where: { $0.option == "--listen" }) {
        demoConfig.listen = ["127.0.0.1:5222", "[::1]:5222"].compactMap(ListenAddress.init)
    }
    defer { if isTemporary { try? FileManager.default.removeItem(atPath: demoConfig.dataDirectory) } }
    do {
        try Demo.seed(demoConfig, passwordsMayBePublic: options.demoPasswordsMayBePublic)
        let server = try Server(config: demoConfig, log: Logger(level: demoConfig.logLevel), webChatDemo: true)
        server.installSignalHandlers()
        let addresses = try server.start()
        let exposed = demoConfig.listen.contains { !$0.isLoopback }
        let banner = Demo.banner(
            config: demoConfig,
            addresses: addresses.map { Demo.SocketAddressDescription(text: $0.description, port: $0.port) },
            lanAddresses: exposed ? lanIPv4Addresses() : [], isTemporary: isTemporary,
            webChatURL: demoConfig.http.webSocket && demoConfig.http.webChat && !demoConfig.http.listen.isEmpty
                ? server.httpAddresses.first.map { "http://\($0)/chat" } : nil)
        FileHandle.standardOutput.write(Data((banner + "\n").utf8))
        server.waitUntilStopped()
    } catch let refusal as Demo.Refusal {
        if isTemporary { try? FileManager.default.removeItem(atPath: demoConfig.dataDirectory) }
        fail("will not start the demo: \(refusal)", status: .usage)
    } catch {
        if isTemporary { try? FileManager.default.removeItem(atPath: demoConfig.dataDirectory) }
        fail("cannot start the demo: \(error)", status: .localFile)
    }
}

switch command {
case "run":
    guard operands.isEmpty else { fail("run takes no operands\n\n\(usage)", status: .usage) }
    let log = Logger(level: config.logLevel)
    do {
        let server = try Server(config: config, log: log)
        server.installSignalHandlers()
        try server.start()
        server.waitUntilStopped()
    } catch {
        fail("cannot start: \(error)", status: .localFile)
    }
case "demo":
    guard operands.isEmpty else { fail("demo takes no operands\n\n\(usage)", status: .usage) }
    runDemo()
case "check-config":
    print(checkConfigReport(config), terminator: "")
case "trust":
    guard operands.isEmpty else { fail("trust takes no operands\n\n\(usage)", status: .usage) }
    let trust: LocalCATrust
    do {
        trust = try LocalCATrust(config: config)
    } catch let unavailable as LocalCATrust.Unavailable {
        fail("no local CA to trust: \(unavailable)", status: .badData)
    } catch {
        fail("cannot make the local CA in \(config.tlsDirectory): \(error)", status: .localFile)
    }
    print(trust.instructions())
    guard let action = options.trustAction else { break }
    print("")
    let outcomes = action == .install ? trust.install() : trust.uninstall()
    for outcome in outcomes { print(outcome) }
    if outcomes.contains(where: { if case .failed = $0 { true } else { false } }) { exit(ExitStatus.localFile.rawValue) }
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
    fail("unknown command '\(command)'\n\n\(usage)", status: .usage)
}
