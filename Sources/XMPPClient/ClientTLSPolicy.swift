import XMPPCore

/// How a client checks the server's certificate.
///
/// Its text form (`description`, parsed back by `init(_:)`) is what the CLI
/// takes for `--tls` and what `SavedCredentials` stores:
///
/// | text | policy |
/// | --- | --- |
/// | `require` | ``requireValid`` |
/// | `pin:AB:CD:…` (64 hex digits, colons and spaces optional) | ``pinned(_:)`` |
/// | `insecure` | ``insecureAcceptAny`` |
public enum ClientTLSPolicy: Sendable, Hashable, LosslessStringConvertible {
    /// The certificate must chain to a trusted root and name the server's
    /// domain (RFC 6125); the default.
    case requireValid
    /// The leaf certificate's SHA-256 fingerprint must be this one; for a
    /// server with a self-signed certificate whose fingerprint the user
    /// checked. It vouches for that server only: an HTTPS transfer to any
    /// other host needs a certificate valid for it, as with
    /// ``requireValid``.
    case pinned(CertificateFingerprint)
    /// Any certificate is accepted: anyone on the path can read and change
    /// the session. Only for local development; like ``pinned(_:)``, it
    /// covers the account's server only.
    case insecureAcceptAny

    /// Parses the text form; `nil` for anything else, including a
    /// fingerprint that is not 64 hex digits.
    public init?(_ text: String) {
        switch text {
        case "require": self = .requireValid
        case "insecure": self = .insecureAcceptAny
        default:
            guard text.hasPrefix(Self.pinPrefix),
                let fingerprint = CertificateFingerprint(
                    hex: String(text.dropFirst(Self.pinPrefix.count)))
            else { return nil }
            self = .pinned(fingerprint)
        }
    }

    /// The text form: `require`, `pin:` and the fingerprint as uppercase
    /// hex pairs joined by colons, or `insecure`.
    public var description: String {
        switch self {
        case .requireValid: "require"
        case .pinned(let fingerprint): Self.pinPrefix + fingerprint.description
        case .insecureAcceptAny: "insecure"
        }
    }

    private static let pinPrefix = "pin:"
}
