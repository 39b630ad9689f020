import COpenSSL

/// A TLS protocol version this project speaks.
///
/// Nothing older than TLS 1.2 is offered or accepted (RFC 8996 deprecates
/// TLS 1.0 and 1.1). TLS 1.2 stays because XMPPFramework, through Apple's
/// SecureTransport, speaks nothing newer.
public enum TLSVersion: Int32, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible
{
    /// TLS 1.2 (RFC 5246).
    case tls1_2 = 0x0303
    /// TLS 1.3 (RFC 8446).
    case tls1_3 = 0x0304

    /// Orders versions oldest first.
    public static func < (lhs: TLSVersion, rhs: TLSVersion) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The name OpenSSL and most logs use: "TLSv1.2", "TLSv1.3".
    public var description: String {
        switch self {
        case .tls1_2: "TLSv1.2"
        case .tls1_3: "TLSv1.3"
        }
    }
}

/// Where a server's certificate chain and private key come from.
public enum TLSCertificateSource: Sendable, Hashable {
    /// PEM files: the leaf certificate first, then any intermediates, and an
    /// unencrypted private key (PKCS #8 or the traditional form).
    case pemFiles(certificateChainPath: String, privateKeyPath: String)
    /// The same, already in memory.
    case pem(certificateChain: String, privateKey: String)
}

/// How a client decides whether to trust the server's certificate.
public enum TLSVerification: Sendable, Hashable {
    /// The chain must end at a root of the system trust store (or one of
    /// `additionalTrustRootsPEM`), and the leaf must be issued for
    /// `hostname`: a DNS name (RFC 6125), or an IP address literal matched
    /// against IP address SANs; a bracketed IPv6 JID domain such as
    /// `[::1]` is accepted.
    case requireValid(hostname: String, additionalTrustRootsPEM: [String] = [])
    /// The leaf certificate's SHA-256 fingerprint must equal this one;
    /// issuer, names and dates are not checked. For a server whose
    /// self-signed certificate's fingerprint was shown to the user.
    case pinned(CertificateFingerprint)
    /// Any certificate is accepted. Insecure: an attacker on the path can
    /// read and change everything. Only for local development against a
    /// self-signed certificate.
    case insecureAcceptAny
}

/// Everything a ``TLSContext`` is built from.
///
/// Defaults: TLS 1.2 to 1.3 (1.3 preferred, as TLS always picks the highest
/// common version), no TLS compression (CRIME), no renegotiation, forward-
/// secret AEAD cipher suites only for TLS 1.2, no ALPN. A server issues one
/// session ticket per full handshake and resumes sessions from tickets
/// sealed with the process's hourly rotated keys (``SessionTicketKeys``).
public struct TLSConfiguration: Sendable, Hashable {
    /// Which side of the handshake a context is for.
    public enum Role: Sendable, Hashable {
        /// Accepts connections, presenting this certificate.
        case server(TLSCertificateSource)
        /// Connects, verifying the server this way.
        case client(TLSVerification)
    }

    /// The ALPN protocol ID for client-to-server XMPP over direct TLS
    /// (XEP-0368 §4).
    public static let xmppClientALPN = "xmpp-client"

    /// Server or client, with the certificate or the verification policy.
    public var role: Role
    /// The oldest version offered or accepted; default TLS 1.2.
    public var minimumVersion: TLSVersion = .tls1_2
    /// The newest version offered or accepted; default TLS 1.3. Set TLS 1.2
    /// to test what XMPPFramework sees.
    public var maximumVersion: TLSVersion = .tls1_3
    /// ALPN protocol IDs (RFC 7301), most preferred first; empty (the
    /// default) for none. A client offers them; a server picks the first of
    /// its own the client offered and carries on without ALPN if there is
    /// none, since many XMPP clients send none.
    public var applicationProtocols: [String] = []
    /// Client only: the name sent in the SNI extension (RFC 6066 §3); by
    /// default the `.requireValid` hostname. Never sent when it is an IP
    /// address literal, which RFC 6066 forbids.
    public var serverName: String?

    /// Creates a configuration for `role` with the defaults above.
    public init(role: Role) {
        self.role = role
    }

    /// A server configuration presenting `certificate`.
    public static func server(certificate: TLSCertificateSource) -> TLSConfiguration {
        TLSConfiguration(role: .server(certificate))
    }

    /// A client configuration verifying the server with `verification`.
    public static func client(
        verification: TLSVerification, serverName: String? = nil
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration(role: .client(verification))
        configuration.serverName = serverName
        return configuration
    }

    /// Whether this configures the server side.
    var isServer: Bool {
        if case .server = role { return true }
        return false
    }

    /// The SNI name a client sends, if any.
    var effectiveServerName: String? {
        var name = serverName
        if name == nil, case .client(.requireValid(let hostname, _)) = role {
            name = hostname
        }
        guard let name, IPAddressLiteral.parse(name) == nil else { return nil }
        return name
    }
}

/// Recognises IP address literals, in the forms certificates and JIDs use.
enum IPAddressLiteral {
    /// The address without brackets if `text` is an IPv4 address, an IPv6
    /// address, or a bracketed IPv6 address (the JID form, RFC 7622 §3.2);
    /// `nil` for anything else.
    ///
    /// The corresponding C function is `a2i_IPADDRESS`.
    static func parse(_ text: String) -> String? {
        var address = Substring(text)
        if address.hasPrefix("["), address.hasSuffix("]") {
            address = address.dropFirst().dropLast()
            guard address.contains(":") else { return nil }
        }
        guard let parsed = a2i_IPADDRESS(String(address)) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        ASN1_OCTET_STRING_free(parsed)
        return String(address)
    }
}
