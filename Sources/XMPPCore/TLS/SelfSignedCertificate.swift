import COpenSSL

/// A self-signed server certificate and its private key, so that a server
/// can offer TLS on first run, before anyone sets up a real certificate.
///
/// Clients reject it unless told otherwise: pin its ``fingerprint``
/// (``TLSVerification/pinned(_:)``), or trust it explicitly on the device.
/// It is built to pass Apple's checks for a user-trusted TLS server
/// certificate: an ECDSA P-256 key, a SHA-256 signature, the name in the
/// subject alternative name (SAN), the serverAuth extended key usage, and a
/// validity under 825 days.
public struct SelfSignedCertificate: Sendable, Hashable {
    /// The certificate, PEM-encoded ("BEGIN CERTIFICATE").
    public let certificatePEM: String
    /// The unencrypted private key, PEM-encoded PKCS #8 ("BEGIN PRIVATE KEY").
    public let privateKeyPEM: String
    /// The certificate's SHA-256 fingerprint, to log and to pin.
    public let fingerprint: CertificateFingerprint

    /// The certificate and key as an in-memory server certificate source.
    public var source: TLSCertificateSource {
        .pem(certificateChain: certificatePEM, privateKey: privateKeyPEM)
    }

    /// The total validity, from `notBefore` to `notAfter`, in days: under
    /// the 825 days iOS accepts for a user-trusted server certificate, with
    /// margin for how the boundary is counted.
    public static let validityDays = 820
    /// Generates a fresh key and a certificate for `domain`.
    ///
    /// The certificate is X.509 v3 with a random 16-byte serial number (126
    /// random bits), subject and issuer `CN=<domain>` (an IPv6 address
    /// without brackets; left empty, with a critical SAN, if the domain is
    /// longer than the 64 characters a CN may hold: RFC 5280 §4.2.1.6), and
    /// these extensions: subjectAltName `DNS:<domain>`, or `IP:<address>`
    /// for an IP address literal; basicConstraints `CA:FALSE` (critical);
    /// keyUsage `digitalSignature` (critical); extendedKeyUsage `serverAuth`.
    ///
    /// - Parameter domain: An ASCII DNS name (an internationalized domain in
    ///   its A-label form), an IPv4 address, or an IPv6 address with or
    ///   without the brackets JIDs use.
    /// - Throws: `TLSError` (`.invalidConfiguration`) for any other domain,
    ///   or if OpenSSL fails.
    ///
    /// The corresponding C functions are `EVP_EC_gen`, `X509_new`,
    /// `X509V3_EXT_conf_nid` and `X509_sign`.
    public static func generate(domain: String) throws(TLSError) -> SelfSignedCertificate {
        let subjectAltName = try Self.subjectAltName(for: domain)
        let key = try CertificateBuilder.newKey()
        defer { EVP_PKEY_free(key) }
        let commonName = IPAddressLiteral.parse(domain) ?? domain
        let request = CertificateBuilder.Request(
            commonName: commonName, validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_alt_name,
                 (CertificateBuilder.fitsCommonName(commonName) ? "" : "critical,") + subjectAltName),
            ])
        let certificate = try CertificateBuilder.certificate(request, key: key)
        defer { X509_free(certificate) }
        return SelfSignedCertificate(
            certificatePEM: try CertificateBuilder.pem(certificate: certificate),
            privateKeyPEM: try CertificateBuilder.pem(privateKey: key),
            fingerprint: CertificateFingerprint(certificate: certificate))
    }

    /// The SAN in OpenSSL's configuration syntax, `DNS:name` or `IP:address`.
    /// The name is checked first, so it cannot smuggle in other entries.
    static func subjectAltName(for domain: String) throws(TLSError) -> String {
        if let address = IPAddressLiteral.parse(domain) {
            return "IP:" + address
        }
        let labels = domain.utf8.split(
            separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let isDNSName =
            domain.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.count) && label.first != UInt8(ascii: "-")
                    && label.last != UInt8(ascii: "-")
                    && label.allSatisfy(isLetterDigitHyphen)
            }
        guard isDNSName else {
            throw TLSError(
                .invalidConfiguration,
                "'\(domain)' is neither an IP address nor an ASCII DNS name"
                    + " (give an internationalized domain in its A-label form)")
        }
        return "DNS:" + domain
    }

    /// RFC 1123 §2.1 host name characters: ASCII letters, digits, hyphen.
    private static func isLetterDigitHyphen(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
