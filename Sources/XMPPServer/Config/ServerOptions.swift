/// The command-line options `swiftletd` takes for its configuration:
/// which file to read, and settings that win over the file.
///
/// ```
/// swiftletd --config etc/swiftletd.conf --domain ydc.local --listen 0.0.0.0:5222
/// ```
///
/// Each option takes a value, as `--option value` or `--option=value`.
/// Arguments that do not start with `-` (a subcommand and its operands) are
/// kept in `arguments`; `--` ends the options.
public struct ServerOptions: Sendable, Equatable {
    /// The `--config` file, or `nil` to use the defaults.
    public var configPath: String?
    /// The settings given as options, for `ServerConfig.load(from:overrides:)`.
    public var overrides: [ConfigOverride] = []
    /// The other arguments, in order.
    public var arguments: [String] = []
    /// `--i-know-demo-passwords-are-public`: lets `demo` listen beyond
    /// loopback, or seed into a data directory with other accounts.
    public var demoPasswordsMayBePublic = false
    /// `--install` or `--uninstall`: what `trust` does beyond printing.
    public var trustAction: TrustAction?

    /// What `swiftletd trust` is asked to do to this machine's trust stores.
    public enum TrustAction: String, Sendable, Equatable {
        case install = "--install"
        case uninstall = "--uninstall"
    }

    /// The options' help lines, for the usage text.
    public static let help = """
          --config PATH     Read settings from PATH (default: none, built-in defaults).
          --domain DOMAIN   The XMPP domain served (config key domain).
          --listen ADDRESS  Listen on ADDRESS:PORT; repeat for several (key listen).
          --http-listen ADDRESS
                            Serve HTTP on ADDRESS:PORT; repeat for several (key
                            http_listen).
          --https-listen ADDRESS
                            Serve HTTPS, and uploads, on ADDRESS:PORT; repeat
                            for several (key https_listen).
          --data-dir PATH   The data directory (key data_directory).
          --tls POLICY      auto, required or optional (key tls).
          --i-know-demo-passwords-are-public
                            Let demo listen beyond loopback, or add its accounts
                            to a data directory that has others.
          --install, --uninstall
                            For trust: add the local CA to this machine's trust
                            stores where permitted, or remove it.
        """

    /// The options that set a config key, and that key.
    static let keyOptions = [
        "--domain": "domain", "--listen": "listen", "--data-dir": "data_directory", "--tls": "tls",
        "--http-listen": "http_listen", "--https-listen": "https_listen",
    ]

    /// The options that may be repeated, each adding to a list.
    static let listOptions: Set<String> = ["--listen", "--http-listen", "--https-listen"]

    /// Reads `arguments` (without the program name).
    ///
    /// - Throws: `UsageError` for an unknown option, an option without its
    ///   value, or an option other than `--listen`, `--http-listen` and
    ///   `--https-listen` given twice.
    public static func parse(_ arguments: [String]) throws(UsageError) -> ServerOptions {
        var options = ServerOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                options.arguments += remaining
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                options.arguments.append(argument)
                continue
            }
            if argument == "--i-know-demo-passwords-are-public" {
                options.demoPasswordsMayBePublic = true
                continue
            }
            if let action = TrustAction(rawValue: argument) {
                guard options.trustAction == nil else { throw UsageError("give --install or --uninstall once") }
                options.trustAction = action
                continue
            }
            let name = String(argument.prefix { $0 != "=" })
            let value: String
            if name.count < argument.count {
                value = String(argument.dropFirst(name.count + 1))
            } else if let next = remaining.first, !next.hasPrefix("--") {
                value = next
                remaining.removeFirst()
            } else {
                throw UsageError("\(name) needs a value")
            }
            try options.record(name, value)
        }
        return options
    }

    private mutating func record(_ name: String, _ value: String) throws(UsageError) {
        if name == "--config" {
            guard configPath == nil else { throw UsageError("--config is given twice") }
            configPath = value
            return
        }
        guard let key = Self.keyOptions[name] else { throw UsageError("unknown option \(name)") }
        if let index = overrides.firstIndex(where: { $0.option == name }) {
            guard Self.listOptions.contains(name) else { throw UsageError("\(name) is given twice") }
            overrides[index].values.append(value)
        } else {
            overrides.append(ConfigOverride(option: name, key: key, values: [value]))
        }
    }

    /// A command line that cannot be understood; `swiftletd` prints it with
    /// the usage and exits with status 64.
    public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, for example `unknown option --domian`.
        public var message: String

        /// Creates an error.
        public init(_ message: String) {
            self.message = message
        }

        /// The message.
        public var description: String { message }
    }
}
