import XMPPCore
import XMPPNet

/// How clients reach the server, one line each: where to connect, where
/// uploads go, and which certificate to trust and how. The server logs
/// them once it listens; `check-config` prints them from the settings.
public struct ClientReach: Sendable {
    /// `Connect: user@localhost at 127.0.0.1 or ::1, port 5222 (STARTTLS)`.
    public var connect: String
    /// `Uploads: https://localhost:5281/upload/…` or why there are none.
    public var uploads: String
    /// `Trust: …`: the certificate clients must trust, its fingerprint and how.
    public var trust: String

    /// The three lines, in order.
    public var lines: [String] { [connect, uploads, trust] }

    /// The lines for `config`.
    /// - Parameters:
    ///   - listeners: The XMPP listeners' bound addresses (ports resolved),
    ///     STARTTLS then direct TLS, as `Server.start()` returns them; nil
    ///     takes the configured ones.
    ///   - uploadBase: The upload URLs' base in force; nil works it out
    ///     from the settings.
    ///   - authority: The local CA that issued the certificate, if any; for
    ///     a generated certificate without one, check-config reads the data
    ///     directory.
    public init(
        _ config: ServerConfig, listeners: [SocketAddress]? = nil, uploadBase: String? = nil,
        authority: LocalCertificateAuthority? = nil
    ) {
        let bound = listeners ?? (config.listen + config.directTLSListen).map(\.socketAddress)
        let plain = bound.prefix(config.listen.count)
        let direct = bound.dropFirst(config.listen.count)
        var ways: [String] = []
        if !plain.isEmpty { ways.append("\(Self.hosts(plain)) port \(Self.ports(plain)) (STARTTLS)") }
        if !direct.isEmpty { ways.append("\(Self.hosts(direct)) port \(Self.ports(direct)) (direct TLS)") }
        connect = "Connect: USER@\(config.domain) at " + (ways.isEmpty ? "no listener" : ways.joined(separator: "; "))

        if !config.upload.enabled {
            uploads = "Uploads: off"
        } else if let base = uploadBase ?? config.effectiveUploadURL()?.url {
            let plainHTTP = base.lowercased().hasPrefix("http://")
            uploads = "Uploads: \(base)/upload/…" + (plainHTTP ? " (plain HTTP: Gajim, Dino and iOS apps refuse it)" : "")
        } else {
            uploads = "Uploads: nothing serves them"
        }

        switch config.certificateSource {
        case .files(let certificate, _):
            trust = "Trust: \(certificate) is set in the config; clients trust it as they trust its issuer"
        case .generated(let certificate, _):
            if let authority = authority ?? config.localAuthority {
                trust =
                    "Trust: the local CA \(authority.certificatePath) (SHA-256 \(authority.fingerprint)); "
                    + "to trust it on this machine, a simulator or a phone: swiftletd trust"
            } else if listeners != nil {
                trust = "Trust: \(certificate), self-signed (from before the local CA): pin it or trust it on each client"
            } else {
                let (root, _) = LocalCertificateAuthority.paths(domain: config.domain, directory: config.tlsDirectory)
                trust = "Trust: the local CA the server creates at first start (\(root)); then: swiftletd trust"
            }
        }
    }

    /// `127.0.0.1 or ::1`, or `any address of this machine`.
    private static func hosts(_ addresses: some Collection<SocketAddress>) -> String {
        let hosts = addresses.map { address in
            address.ipString == "0.0.0.0" || address.ipString == "::" ? "any address of this machine" : address.ipString
        }
        return hosts.uniqued().joined(separator: " or ")
    }

    /// `5222`, or `5222, 5223` when they differ.
    private static func ports(_ addresses: some Collection<SocketAddress>) -> String {
        addresses.map(\.port).uniqued().map(String.init).joined(separator: ", ")
    }
}
