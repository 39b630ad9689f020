import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private certificate authority for one server's data directory, in the
/// way `mkcert` serves local development: a device trusts its root once
/// (`swiftletd trust`) and then every server certificate it issues, which
/// the server renews and reissues by itself when its names or addresses
/// change.
///
/// The root is name-constrained (RFC 5280 §4.2.1.10) to the served domain
/// and its subdomains, `localhost`, and loopback, private and link-local
/// addresses, so that its key cannot vouch for anyone else's site. Its
/// files are `<directory>/<domain>-ca.crt` and `-ca.key` (mode 0600); the
/// server certificate is `<directory>/<domain>.crt` and `.key`, where the
/// self-signed certificate of earlier versions was.
public struct LocalCertificateAuthority: Sendable, Hashable {
    /// The served domain, the one DNS name (with its subdomains) the root
    /// permits besides `localhost`.
    public let domain: String
    /// The root certificate, PEM, mode 0644: what devices trust.
    public let certificatePath: String
    /// The root's private key, PEM, mode 0600.
    public let privateKeyPath: String
    /// The root's SHA-256 fingerprint, to compare on a device.
    public let fingerprint: CertificateFingerprint
    /// Whether this call created the root.
    public let wasCreated: Bool

    /// The root's validity: ten years.
    public static let validityDays = 3650
    /// A server certificate's validity: within the 398 days Apple accepts
    /// for TLS server certificates.
    public static let serverValidityDays = 397
    /// A server certificate this close to its end is renewed at start.
    public static let renewalDays = 30

    /// The address blocks the root permits, as (address, prefix length):
    /// loopback, RFC 1918 and RFC 4193 private, RFC 6598 shared (where
    /// VPNs such as Tailscale number hosts), and link-local.
    static let permittedBlocks: [(String, Int)] = [
        ("127.0.0.0", 8), ("10.0.0.0", 8), ("172.16.0.0", 12), ("192.168.0.0", 16), ("100.64.0.0", 10),
        ("169.254.0.0", 16), ("::1", 128), ("fc00::", 7), ("fe80::", 10),
    ]

    /// The root's files for `domain` in `directory`.
    public static func paths(domain: String, directory: String) -> (certificate: String, privateKey: String) {
        (directory + "/" + domain + "-ca.crt", directory + "/" + domain + "-ca.key")
    }

    /// The root for `domain` in `directory` if it exists, without creating it.
    public static func existing(domain: String, directory: String) throws(TLSError) -> LocalCertificateAuthority? {
        let (certificatePath, keyPath) = paths(domain: domain, directory: directory)
        guard access(certificatePath, F_OK) == 0 else { return nil }
        let certificate = try X509Certificates.readFirst(path: certificatePath)
        defer { X509_free(certificate) }
        return LocalCertificateAuthority(
            domain: domain, certificatePath: certificatePath, privateKeyPath: keyPath,
            fingerprint: CertificateFingerprint(certificate: certificate), wasCreated: false)
    }

    /// The root for `domain` in `directory`, created (with the directory,
    /// mode 0700) if it does not exist yet.
    ///
    /// - Parameter host: The machine's name, put in the root's name so that
    ///   a trust store listing several roots tells them apart.
    /// - Throws: `TLSError` (`.invalidConfiguration`) for a domain that is
    ///   neither a DNS name nor an IP address, or when a file cannot be
    ///   read or written.
    public static func loadOrCreate(domain: String, directory: String, host: String) throws(TLSError)
        -> LocalCertificateAuthority
    {
        _ = try SelfSignedCertificate.subjectAltName(for: domain)
        if let root = try existing(domain: domain, directory: directory) { return root }
        let (certificatePath, keyPath) = paths(domain: domain, directory: directory)
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw PEMFiles.systemError("cannot create directory \(directory)")
        }
        let key = try CertificateBuilder.newKey()
        defer { EVP_PKEY_free(key) }
        // A random tag makes each root's name its own: verifiers find an
        // issuer by name, and a second root of the same name in a trust
        // store (another data directory's) would hide this one.
        let tag = Hex.encode(Crypto.randomBytes(count: 4))
        let names = ["Swiftlet local CA \(tag) for \(domain) on \(host)", "Swiftlet local CA \(tag) for \(domain)"]
        let request = CertificateBuilder.Request(
            commonName: names.first(where: CertificateBuilder.fitsCommonName) ?? "Swiftlet local CA \(tag)",
            organization: "Swiftlet local development CA", validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
                (NID_name_constraints, "critical," + nameConstraints(domain: domain)),
            ])
        let certificate = try CertificateBuilder.certificate(request, key: key)
        defer { X509_free(certificate) }
        try PEMFiles.writeNew(keyPath, try CertificateBuilder.pem(privateKey: key), mode: 0o600)
        do throws(TLSError) {
            try PEMFiles.writeNew(certificatePath, try CertificateBuilder.pem(certificate: certificate), mode: 0o644)
        } catch {
            unlink(keyPath)
            throw error
        }
        return LocalCertificateAuthority(
            domain: domain, certificatePath: certificatePath, privateKeyPath: keyPath,
            fingerprint: CertificateFingerprint(certificate: certificate), wasCreated: true)
    }

    /// The root's permitted subtrees in OpenSSL's configuration syntax.
    static func nameConstraints(domain: String) -> String {
        var subtrees: [String] = []
        if let address = IPAddressLiteral.parse(domain) {
            // A domain that is an address is permitted whatever its block.
            let bits = address.contains(":") ? 128 : 32
            subtrees.append("IP:\(address)/\(mask(bits: bits, ofLength: bits))")
        } else if domain != "localhost" {
            subtrees.append("DNS:\(domain)")
        }
        subtrees.append("DNS:localhost")
        for (address, bits) in permittedBlocks {
            subtrees.append("IP:\(address)/\(mask(bits: bits, ofLength: address.contains(":") ? 128 : 32))")
        }
        return subtrees.map { "permitted;" + $0 }.joined(separator: ",")
    }

    /// A netmask of `bits` ones in an address of `length` bits, in the
    /// address's own notation.
    private static func mask(bits: Int, ofLength length: Int) -> String {
        let bytes = (0..<(length / 8)).map { index in
            UInt8(truncatingIfNeeded: 0xFF00 >> min(8, max(0, bits - index * 8)))
        }
        if length == 32 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }

    /// Whether the root may vouch for `name`, a DNS name or an IP address:
    /// the domain, its subdomains, `localhost` and its subdomains, the
    /// domain's own address, and addresses in `permittedBlocks`.
    public func permits(_ name: String) -> Bool {
        // Checked first: a name goes into the certificate's SAN as it is.
        guard (try? SelfSignedCertificate.subjectAltName(for: name)) != nil else { return false }
        if let address = IPAddressLiteral.parse(name) {
            if let own = IPAddressLiteral.parse(domain), Self.bytes(of: own) == Self.bytes(of: address) { return true }
            guard let bytes = Self.bytes(of: address) else { return false }
            return Self.permittedBlocks.contains { block, prefix in
                guard let base = Self.bytes(of: block), base.count == bytes.count else { return false }
                return (0..<base.count).allSatisfy { index in
                    let ones = UInt8(truncatingIfNeeded: 0xFF00 >> min(8, max(0, prefix - index * 8)))
                    return bytes[index] & ones == base[index]
                }
            }
        }
        let lowered = name.lowercased()
        let roots = IPAddressLiteral.parse(domain) == nil ? [domain.lowercased(), "localhost"] : ["localhost"]
        return roots.contains { lowered == $0 || lowered.hasSuffix("." + $0) }
    }

    /// The bytes of an address literal.
    private static func bytes(of address: String) -> [UInt8]? {
        guard let parsed = a2i_IPADDRESS(address) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { ASN1_OCTET_STRING_free(parsed) }
        guard let data = ASN1_STRING_get0_data(parsed) else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(parsed))))
    }

    /// The server certificate for `names` (DNS names and IP addresses, the
    /// first one the domain) in `directory`: the one there if this root
    /// issued it, it covers every name, matches its key and has more than
    /// `renewalDays` left; else a new one, replacing it. A certificate there
    /// that this root did not issue (an operator's own) is used as it is.
    ///
    /// - Parameter names: What the certificate must cover; names the root
    ///   does not permit are left out (check with ``permits(_:)`` first).
    public func serverCertificate(for names: [String], directory: String) throws(TLSError) -> CertificateFiles {
        let certificatePath = directory + "/" + domain + ".crt"
        let keyPath = directory + "/" + domain + ".key"
        let covered = names.filter(permits)
        let root = try X509Certificates.readFirst(path: self.certificatePath)
        defer { X509_free(root) }
        if access(certificatePath, F_OK) == 0, access(keyPath, F_OK) == 0 {
            let current = try X509Certificates.readFirst(path: certificatePath)
            defer { X509_free(current) }
            let fingerprint = CertificateFingerprint(certificate: current)
            let unchanged = CertificateFiles(
                certificatePath: certificatePath, privateKeyPath: keyPath, fingerprint: fingerprint, wasCreated: false)
            guard Self.signs(root, current) else { return unchanged }
            let key = try? CertificateBuilder.readPrivateKey(path: keyPath)
            defer { key.map { EVP_PKEY_free($0) } }
            if let key, X509_check_private_key(current, key) == 1, Self.covers(current, covered),
                Self.lasts(current, days: Self.renewalDays)
            {
                return unchanged
            }
            OpenSSLErrorQueue.clear()
        }
        return try issue(for: covered, root: root, certificatePath: certificatePath, keyPath: keyPath)
    }

    /// Whether this root signed the certificate in the PEM file at `path`.
    public func issued(certificateAt path: String) -> Bool {
        guard let root = try? X509Certificates.readFirst(path: certificatePath) else { return false }
        defer { X509_free(root) }
        guard let certificate = try? X509Certificates.readFirst(path: path) else { return false }
        defer { X509_free(certificate) }
        return Self.signs(root, certificate)
    }

    /// Whether `root`'s key signed `certificate`.
    private static func signs(_ root: OpaquePointer, _ certificate: OpaquePointer) -> Bool {
        defer { OpenSSLErrorQueue.clear() }
        return X509_verify(certificate, X509_get0_pubkey(root)) == 1
    }

    /// Whether `certificate` names every one of `names`.
    ///
    /// The corresponding C functions are `X509_check_host` and `X509_check_ip_asc`.
    private static func covers(_ certificate: OpaquePointer, _ names: [String]) -> Bool {
        names.allSatisfy { name in
            if let address = IPAddressLiteral.parse(name) { return X509_check_ip_asc(certificate, address, 0) == 1 }
            return X509_check_host(certificate, name, name.utf8.count, UInt32(X509_CHECK_FLAG_NO_WILDCARDS), nil) == 1
        }
    }

    /// Whether `certificate` is still valid `days` from now.
    private static func lasts(_ certificate: OpaquePointer, days: Int) -> Bool {
        var deadline = time(nil) + days * 86_400
        return X509_cmp_time(X509_get0_notAfter(certificate), &deadline) > 0
    }

    /// Issues a new server certificate and key for `names` and writes them.
    private func issue(for names: [String], root: OpaquePointer, certificatePath: String, keyPath: String)
        throws(TLSError) -> CertificateFiles
    {
        guard let first = names.first else {
            throw TLSError(.invalidConfiguration, "no name for the server certificate is within the local CA's")
        }
        let rootKey = try CertificateBuilder.readPrivateKey(path: privateKeyPath)
        defer { EVP_PKEY_free(rootKey) }
        let key = try CertificateBuilder.newKey()
        defer { EVP_PKEY_free(key) }
        let alternativeNames = names.map { IPAddressLiteral.parse($0).map { "IP:" + $0 } ?? "DNS:" + $0 }
        let commonName = IPAddressLiteral.parse(first) ?? first
        let request = CertificateBuilder.Request(
            commonName: commonName, validityDays: Self.serverValidityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
                (NID_subject_alt_name,
                 (CertificateBuilder.fitsCommonName(commonName) ? "" : "critical,")
                    + alternativeNames.joined(separator: ",")),
            ])
        let certificate = try CertificateBuilder.certificate(request, key: key, issuer: (root, rootKey))
        defer { X509_free(certificate) }
        try PEMFiles.replace(keyPath, try CertificateBuilder.pem(privateKey: key), mode: 0o600)
        try PEMFiles.replace(certificatePath, try CertificateBuilder.pem(certificate: certificate), mode: 0o644)
        return CertificateFiles(
            certificatePath: certificatePath, privateKeyPath: keyPath,
            fingerprint: CertificateFingerprint(certificate: certificate), wasCreated: true)
    }

    /// The root certificate's DER encoding, for an Apple configuration
    /// profile and for trust stores that want DER.
    public func certificateDER() throws(TLSError) -> [UInt8] {
        let root = try X509Certificates.readFirst(path: certificatePath)
        defer { X509_free(root) }
        return X509Certificates.der(root)
    }
}
