import Foundation
import XMPPClient
import XMPPCore

/// The options every command takes: which account, which server, how to
/// trust it, where the files are.
public struct GlobalOptions: Sendable, Equatable {
    /// `--account JID`: the saved account to use.
    public var account: JID?
    /// `--server HOST[:PORT]`: where to connect instead of the saved server
    /// (or the JID's domain and port 5222).
    public var server: ServerAddress?
    /// `--tls`: how to trust the server's certificate instead of the saved
    /// policy (or `require`).
    public var tls: ClientTLSPolicy?
    /// `--home DIR`: where accounts and the archive are.
    public var home: String?
    /// `--resource R`: the resource to ask for; the server picks one by default.
    public var resource: String?
    /// `--timeout SECONDS`: the longest wait for the server, or how long
    /// listen, presence and chat run.
    public var timeout: Duration?
    /// `--verbose`: say how the login went (SASL profile, mechanism,
    /// channel binding) on standard error.
    public var verbose = false

    /// No options given.
    public init() {}

    /// The global options, for parsing and `--help`.
    static let specs: [OptionSpec] = [
        .value("--account", "JID", "The saved account to use (default: the one logged in last)."),
        .value("--server", "HOST[:PORT]", "Connect there instead of the saved server or the JID's domain."),
        .value("--tls", "POLICY", "require (default), pin:SHA256-FINGERPRINT or insecure."),
        .value("--home", "DIR", "Where accounts and the archive are (default below)."),
        .value("--resource", "R", "The resource to ask for (default: the server picks)."),
        .value(
            "--timeout", "SECONDS",
            "The longest wait for the server (default 15); listen, presence and chat stop after it."),
        .flag("--verbose", "Say how the login went: SASL mechanism and channel binding."),
    ]

    /// Sets the option `name` from its text.
    /// - Throws: `CommandFailure`: `.badData` for a malformed JID, `.usage`
    ///   for any other malformed value.
    mutating func set(_ name: String, _ text: String) throws(CommandFailure) {
        switch name {
        case "--account": account = try Self.accountJID(text)
        case "--server":
            guard let server = ServerAddress(text) else {
                throw .usage("--server wants HOST or HOST:PORT, not '\(text)'")
            }
            self.server = server
        case "--tls":
            guard let tls = ClientTLSPolicy(text) else {
                throw .usage("--tls wants require, insecure or pin: and 64 hex digits, not '\(text)'")
            }
            self.tls = tls
        case "--home": home = text
        case "--resource": resource = text
        case "--timeout":
            guard let seconds = Double(text), seconds > 0, seconds <= 86_400 * 365 else {
                throw .usage("--timeout wants a number of seconds, not '\(text)'")
            }
            timeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        case "--verbose": verbose = true
        default: preconditionFailure("\(name) is not a global option")
        }
    }

    /// Parses an account's JID: a bare JID with a localpart.
    /// - Throws: `CommandFailure` with `.badData`.
    public static func accountJID(_ text: String) throws(CommandFailure) -> JID {
        let jid: JID
        do {
            jid = try JID(text)
        } catch {
            throw CommandFailure(.badData, "'\(text)' is not a valid JID: \(error)")
        }
        guard jid.localpart != nil, jid.isBare else {
            throw CommandFailure(.badData, "'\(text)' is not an account JID (like alice@example.com)")
        }
        return jid
    }
}
