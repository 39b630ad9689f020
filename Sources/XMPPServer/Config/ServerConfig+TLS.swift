import XMPPCore

/// The TLS policy in force once `tls = auto` is resolved, and why; the
/// server logs it at start and `check-config` prints it.
public struct EffectiveTLSPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Whether STARTTLS is offered with `<required/>` (RFC 6120 §5.3.1).
    public enum Requirement: String, Sendable {
        case required
        case optional
    }

    /// What the server does.
    public let requirement: Requirement
    /// Why, for example `every listener is on loopback`.
    public let reason: String

    /// Whether SCRAM-SHA-1 and SCRAM-SHA-256 may run before TLS: exactly
    /// when TLS is optional. PLAIN is never accepted without TLS, whatever
    /// the policy.
    ///
    /// COMPAT: XMPPFramework: unchanged apps start TLS only when it is
    /// required, and log in with SCRAM-SHA-1, so a loopback-only server
    /// must accept SCRAM in plaintext.
    public var allowsSCRAMWithoutTLS: Bool { requirement == .optional }

    /// `optional: every listener is on loopback`.
    public var description: String { "\(requirement.rawValue): \(reason)" }
}

/// Where the server's TLS certificate and key come from.
public enum CertificateSource: Sendable, Equatable {
    /// The files named by `certificate` and `private_key`.
    case files(certificate: String, privateKey: String)
    /// Files the server makes in the data directory's `tls` folder: a
    /// certificate its local certificate authority issues (the authority's
    /// root beside it, `<domain>-ca.crt`), or, in a data directory from
    /// before the authority, the self-signed certificate found there.
    case generated(certificate: String, privateKey: String)
}

extension ServerConfig {
    /// The TLS policy in force: `tls` itself unless it is `auto`, which is
    /// `required` when any `listen` address is not loopback and `optional`
    /// when all are.
    ///
    /// COMPAT: XMPPFramework: unchanged apps stay in plaintext when STARTTLS
    /// is optional, and reject the self-signed certificate when it is
    /// required (XMPPFRAMEWORK.md "TLS for local development").
    ///
    /// Direct TLS listeners do not count: they always use TLS, so they
    /// expose no plaintext.
    public var effectiveTLSPolicy: EffectiveTLSPolicy {
        switch tls.policy {
        case .required:
            return EffectiveTLSPolicy(requirement: .required, reason: "set in the config (tls = required)")
        case .optional:
            return EffectiveTLSPolicy(requirement: .optional, reason: "set in the config (tls = optional)")
        case .auto:
            if let exposed = listen.first(where: { !$0.isLoopback }) {
                return EffectiveTLSPolicy(requirement: .required, reason: "\(exposed) is not loopback")
            }
            let reason =
                directTLSListen.allSatisfy(\.isLoopback)
                ? "every listener is on loopback"
                : "every STARTTLS listener is on loopback (direct TLS listeners always use TLS)"
            return EffectiveTLSPolicy(requirement: .optional, reason: reason)
        }
    }

    /// The certificate in use: the configured files, or the generated
    /// pair `<data_directory>/tls/<domain>.crt` and `.key`. The domain is in
    /// the file name so that changing the domain makes a new certificate.
    public var certificateSource: CertificateSource {
        if !tls.certificate.isEmpty {
            return .files(certificate: tls.certificate, privateKey: tls.privateKey)
        }
        return .generated(certificate: "\(tlsDirectory)/\(domain).crt", privateKey: "\(tlsDirectory)/\(domain).key")
    }

    /// Where the server keeps the certificates it makes: `<data_directory>/tls`.
    public var tlsDirectory: String {
        dataDirectory.hasSuffix("/") ? "\(dataDirectory)tls" : "\(dataDirectory)/tls"
    }

    /// The local certificate authority's root for this domain and data
    /// directory, if the server has made it (`LocalCertificateAuthority`).
    public var localAuthority: LocalCertificateAuthority? {
        try? LocalCertificateAuthority.existing(domain: domain, directory: tlsDirectory)
    }

    /// Settings that work but are probably a mistake, one sentence each;
    /// the server logs them at start and `check-config` prints them.
    public var warnings: [String] {
        var warnings: [String] = []
        let exposed = (listen + directTLSListen).filter { !$0.isLoopback }
        let plaintextExposed = listen.filter { !$0.isLoopback }
        let names = { (addresses: [ListenAddress]) in
            addresses.map(\.description).joined(separator: ", ") + (addresses.count == 1 ? ", which is" : ", which are")
        }
        if registration.mode == .open, !exposed.isEmpty {
            let throttle = registration.throttle.map { "at most \($0) per IP address" } ?? "with no throttle"
            warnings.append(
                "registration is open on \(names(exposed)) not loopback: anyone who can connect "
                    + "can create accounts (\(throttle)); set registration = closed to use adduser only")
        }
        if effectiveTLSPolicy.requirement == .optional, !plaintextExposed.isEmpty {
            warnings.append(
                "TLS is optional on \(names(plaintextExposed)) not loopback: clients there may "
                    + "log in and chat in plaintext")
        }
        if case .generated = certificateSource, !exposed.isEmpty {
            warnings.append(
                "the certificate is the server's own: clients on other machines refuse it until they trust its "
                    + "local CA (swiftletd trust); set certificate and private_key for a real one")
        }
        if authentication.loginThrottle == nil, !exposed.isEmpty {
            warnings.append(
                "login_throttle is off on a server reachable from other machines: passwords can be guessed quickly")
        }
        if limits.maxStanzaSize < 1 << 20 {
            warnings.append(
                "max_stanza_size is below 1MiB: XMPPFramework apps send unresized vCard photos "
                    + "and would be disconnected")
        }
        return warnings + uploadWarnings + componentWarnings
    }
}
