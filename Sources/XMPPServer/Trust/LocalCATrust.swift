import Foundation
import XMPPCore

/// `swiftletd trust`: how to make every place a developer tests from trust
/// the local CA's root (this machine's system store, Firefox and Chromium,
/// the iOS Simulator, a phone), and, when asked, doing it where this
/// machine permits, or undoing it.
///
/// Each store gets the root under a name made of the domain and the start
/// of the root's fingerprint, so that roots of several data directories
/// live side by side and `uninstall` removes exactly this one.
public struct LocalCATrust {
    /// Where the stores are on this machine; the defaults are the real
    /// ones, tests point them elsewhere.
    public struct Places: Sendable {
        /// Debian's and Ubuntu's directory of local roots.
        public var systemStore = "/usr/local/share/ca-certificates"
        /// What rebuilds the system bundle from that directory.
        public var updateCommand = ["update-ca-certificates"]
        /// The home directory, where NSS keeps its databases.
        public var home = NSHomeDirectory()
        /// The directories searched for `certutil` and `xcrun`.
        public var searchPath = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)

        /// The real places.
        public init() {}
    }

    /// What one step did.
    public enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Done: what.
        case done(String)
        /// Not done, and why, with what to run instead if anything.
        case skipped(String)
        /// Tried and failed: why.
        case failed(String)

        public var description: String {
            switch self {
            case .done(let text): "done: \(text)"
            case .skipped(let text): "skipped: \(text)"
            case .failed(let text): "failed: \(text)"
            }
        }
    }

    /// The root to trust.
    public let authority: LocalCertificateAuthority
    /// Where profiles and the PEM can be fetched from, best first:
    /// `https://HOST:PORT/ca.mobileconfig` and the like.
    public let profileURLs: [String]
    /// The stores' places.
    public let places: Places

    /// Trust for `authority`'s root.
    public init(authority: LocalCertificateAuthority, profileURLs: [String], places: Places = Places()) {
        self.authority = authority
        self.profileURLs = profileURLs
        self.places = places
    }

    /// Trust for the root of `config`'s data directory, made now if the
    /// server has not made it yet (as the server would at start).
    /// - Throws: `LocalCATrust.Unavailable` when the server does not use a
    ///   local CA: a configured certificate, or a self-signed one from
    ///   before the CA; `TLSError` when the root cannot be made.
    public init(config: ServerConfig, places: Places = Places()) throws {
        guard case .generated(let certificate, _) = config.certificateSource else {
            throw Unavailable(
                "the certificate is set in the config (certificate = \(config.tls.certificate)): "
                    + "clients trust it as they trust its issuer")
        }
        if FileManager.default.fileExists(atPath: certificate), config.localAuthority == nil {
            throw Unavailable(
                "\(certificate) is self-signed, from before the local CA: remove it and its key, "
                    + "start swiftletd once to have the local CA issue one, then run trust again")
        }
        try FileManager.default.createDirectory(
            atPath: config.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let authority = try LocalCertificateAuthority.loadOrCreate(
            domain: config.domain, directory: config.tlsDirectory, host: ServerCertificate.hostName())
        self.init(
            authority: authority, profileURLs: Self.profileURLs(config, lanAddresses: lanIPv4Addresses()), places: places)
    }

    /// Why `trust` cannot help with this configuration.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Where the server offers the Apple profile: each HTTPS listener (at
    /// the machine's network addresses for one on every address), then
    /// each plain HTTP one (this machine only).
    static func profileURLs(_ config: ServerConfig, lanAddresses: [String]) -> [String] {
        let url = { (scheme: String, host: String, port: UInt16) in
            "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)\(LocalCAResponder.profilePath)"
        }
        var urls: [String] = []
        for address in config.http.tlsListen {
            let wildcard = address.host == "0.0.0.0" || address.host == "::"
            urls += (wildcard ? lanAddresses : [address.host]).map { url("https", $0, address.port) }
        }
        urls += config.http.listen.map { url("http", $0.host, $0.port) }
        return urls.uniqued()
    }

    /// `swiftlet-<domain>-<8 hex digits>`: the root's name in every store.
    var storeName: String {
        "swiftlet-\(authority.domain)-\(Hex.encode(authority.fingerprint.bytes.prefix(4)))"
    }

    /// The root's file in the system store.
    var systemStoreFile: String { "\(places.systemStore)/\(storeName).crt" }

    /// The Apple profile written beside the root by `install`.
    var profileFile: String {
        String(authority.certificatePath.dropLast(".crt".count)) + ".mobileconfig"
    }

    // MARK: - Instructions

    /// What to run, store by store, for the operator to read.
    public func instructions() -> String {
        let root = authority.certificatePath
        var lines = [
            "Local CA for \(authority.domain): \(root)",
            "SHA-256 \(authority.fingerprint)",
            "",
            "This machine (Debian, Ubuntu), as root:",
            "  cp \(root) \(systemStoreFile) && \(places.updateCommand.joined(separator: " "))",
            "Firefox and Chromium (NSS), for each profile's database:",
            "  certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n \(storeName) -i \(root)",
            "macOS, as an administrator:",
            "  security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain \(root)",
            "iOS Simulator, on the Mac that runs it:",
            "  xcrun simctl keychain booted add-root-cert \(root)",
            "iPhone or iPad: open the profile in Safari, or AirDrop or mail it to the device:",
        ]
        lines += profileURLs.map { "  \($0)" }
        lines += [
            "  \(profileFile) (written by --install)",
            "  then Settings > General > VPN & Device Management > install the profile, and",
            "  Settings > General > About > Certificate Trust Settings > turn on full trust for it.",
            "",
            "swiftletd trust --install does what this machine permits; --uninstall undoes it.",
        ]
        return lines.joined(separator: "\n")
    }

    // MARK: - Install and uninstall

    /// Adds the root to every store this machine has and permits, and
    /// writes the Apple profile beside it.
    public func install() -> [Outcome] {
        var outcomes: [Outcome] = []
        do {
            try AppleConfigurationProfile.rootCertificate(authority).write(
                toFile: profileFile, atomically: true, encoding: .utf8)
            outcomes.append(.done("wrote the iPhone and iPad profile \(profileFile)"))
        } catch {
            outcomes.append(.failed("cannot write \(profileFile): \(error)"))
        }
        outcomes.append(installInSystemStore())
        outcomes += nss(adding: true)
        outcomes.append(simulator())
        return outcomes
    }

    /// Removes the root from the stores `install` added it to.
    public func uninstall() -> [Outcome] {
        var outcomes = [removeFromSystemStore()]
        outcomes += nss(adding: false)
        outcomes.append(
            .skipped(
                "the iOS Simulator cannot remove one root: xcrun simctl keychain booted reset removes every one added"))
        if FileManager.default.fileExists(atPath: profileFile) {
            try? FileManager.default.removeItem(atPath: profileFile)
            outcomes.append(.done("removed \(profileFile); on a device, remove the profile in Settings"))
        }
        return outcomes
    }

    private func installInSystemStore() -> Outcome {
        guard let update = find(places.updateCommand[0]) else {
            return .skipped("no \(places.updateCommand[0]) here (not Debian or Ubuntu)")
        }
        guard FileManager.default.isWritableFile(atPath: places.systemStore) else {
            return .skipped(
                "the system store needs root: sudo cp \(authority.certificatePath) \(systemStoreFile) "
                    + "&& sudo \(places.updateCommand.joined(separator: " "))")
        }
        do {
            if FileManager.default.fileExists(atPath: systemStoreFile) {
                try FileManager.default.removeItem(atPath: systemStoreFile)
            }
            try FileManager.default.copyItem(atPath: authority.certificatePath, toPath: systemStoreFile)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: systemStoreFile)
        } catch {
            return .failed("cannot copy the root to \(systemStoreFile): \(error)")
        }
        return run([update] + places.updateCommand.dropFirst(), doing: "added \(systemStoreFile) to the system store")
    }

    private func removeFromSystemStore() -> Outcome {
        guard FileManager.default.fileExists(atPath: systemStoreFile) else {
            return .skipped("the system store does not hold \(systemStoreFile)")
        }
        do {
            try FileManager.default.removeItem(atPath: systemStoreFile)
        } catch {
            return .skipped("the system store needs root: sudo rm \(systemStoreFile) && sudo update-ca-certificates")
        }
        guard let update = find(places.updateCommand[0]) else { return .done("removed \(systemStoreFile)") }
        return run([update] + places.updateCommand.dropFirst(), doing: "removed \(systemStoreFile) from the system store")
    }

    /// The NSS databases of this user: Chromium's and each Firefox profile's.
    var nssDatabases: [String] {
        var databases = ["\(places.home)/.pki/nssdb"]
        for profiles in ["\(places.home)/.mozilla/firefox", "\(places.home)/snap/firefox/common/.mozilla/firefox"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: profiles)) ?? []
            databases += names.sorted().map { "\(profiles)/\($0)" }
        }
        return databases.filter { FileManager.default.fileExists(atPath: "\($0)/cert9.db") }
    }

    private func nss(adding: Bool) -> [Outcome] {
        let databases = nssDatabases
        guard !databases.isEmpty else { return [.skipped("no Firefox or Chromium certificate database in \(places.home)")] }
        guard let certutil = find("certutil") else {
            return [.skipped("certutil is not installed (apt-get install libnss3-tools) for \(databases.joined(separator: ", "))")]
        }
        return databases.map { database in
            let arguments =
                adding
                ? ["-d", "sql:\(database)", "-A", "-t", "C,,", "-n", storeName, "-i", authority.certificatePath]
                : ["-d", "sql:\(database)", "-D", "-n", storeName]
            return run([certutil] + arguments, doing: "\(adding ? "added to" : "removed from") \(database)")
        }
    }

    private func simulator() -> Outcome {
        guard let xcrun = find("xcrun") else {
            return .skipped("no xcrun here: run xcrun simctl keychain booted add-root-cert on the Mac")
        }
        return run(
            [xcrun, "simctl", "keychain", "booted", "add-root-cert", authority.certificatePath],
            doing: "added to the booted iOS Simulator")
    }

    /// The executable `name` on the search path, or `name` itself when it
    /// is a path.
    private func find(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        return places.searchPath.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `command` (an executable path and its arguments) to its end.
    private func run(_ command: [String], doing what: String) -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            return .failed("cannot run \(command[0]): \(error)")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let detail = text.split(separator: "\n").last.map(String.init) ?? "no output"
            return .failed("\(what): \((command[0] as NSString).lastPathComponent) exited with \(process.terminationStatus): \(detail)")
        }
        return .done(what)
    }
}
