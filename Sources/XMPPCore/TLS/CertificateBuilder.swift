import COpenSSL

/// The one recipe behind every certificate the server makes itself: the
/// self-signed certificate, the local certificate authority's root and
/// the server certificates it issues.
///
/// Each is X.509 v3 with an ECDSA P-256 key, a SHA-256 signature and a
/// random 16-byte serial number (126 random bits), valid from an hour ago
/// (for peers whose clocks run a little behind).
enum CertificateBuilder {
    /// What differs between the certificates.
    struct Request {
        /// `CN`, left out when empty or longer than the 64 characters a CN
        /// may hold (RFC 5280 §4.2.1.6: the SAN must then be critical).
        var commonName: String
        /// `O`, left out when empty.
        var organization = ""
        /// From `notBefore` to `notAfter`, in days.
        var validityDays: Int
        /// `(NID, value)` in OpenSSL's configuration syntax, in order.
        var extensions: [(Int32, String)]
    }

    /// How far `notBefore` lies in the past, in seconds; part of the validity.
    static let backdateSeconds = 3600

    /// Whether `commonName` fits a CN.
    static func fitsCommonName(_ commonName: String) -> Bool {
        !commonName.isEmpty && commonName.utf8.count <= Int(ub_common_name)
    }

    /// A fresh P-256 key; the caller frees it.
    ///
    /// The corresponding C function is `EVP_EC_gen`.
    static func newKey() throws(TLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let key = swiftlet_EVP_EC_gen("P-256") else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot generate a P-256 key")
        }
        return key
    }

    /// A certificate for `key` as `request` describes it, signed by
    /// `issuer` (its certificate and key), or by `key` itself when `issuer`
    /// is nil; the caller frees it.
    ///
    /// The corresponding C functions are `X509_new`, `X509V3_EXT_conf_nid`
    /// and `X509_sign`.
    static func certificate(
        _ request: Request, key: OpaquePointer, issuer: (certificate: OpaquePointer, key: OpaquePointer)? = nil
    ) throws(TLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let certificate = X509_new() else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot allocate a certificate")
        }
        do throws(TLSError) {
            try fill(certificate, key: key, request: request, issuer: issuer?.certificate)
            guard X509_sign(certificate, issuer?.key ?? key, EVP_sha256()) > 0 else {
                throw TLSError.drainingQueue(.invalidConfiguration, "cannot sign the certificate")
            }
            return certificate
        } catch {
            X509_free(certificate)
            throw error
        }
    }

    /// `certificate` PEM-encoded ("BEGIN CERTIFICATE").
    static func pem(certificate: OpaquePointer) throws(TLSError) -> String {
        guard let pem = MemoryBIO.text({ PEM_write_bio_X509($0, certificate) }) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot encode the certificate")
        }
        return pem
    }

    /// `key` unencrypted, PEM-encoded PKCS #8 ("BEGIN PRIVATE KEY").
    static func pem(privateKey key: OpaquePointer) throws(TLSError) -> String {
        guard let pem = MemoryBIO.text({ PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot encode the private key")
        }
        return pem
    }

    /// Reads the private key of the PEM file at `path`; the caller frees it.
    ///
    /// The corresponding C function is `PEM_read_bio_PrivateKey`.
    static func readPrivateKey(path: String) throws(TLSError) -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let bio = BIO_new_file(path, "r") else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot read \(path)")
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "\(path) holds no PEM private key")
        }
        return key
    }

    /// Sets everything but the signature.
    private static func fill(
        _ certificate: OpaquePointer, key: OpaquePointer, request: Request, issuer: OpaquePointer?
    ) throws(TLSError) {
        var serial = Crypto.randomBytes(count: 16)
        // BN_bin2bn reads it unsigned, so the serial is positive (RFC 5280
        // §4.1.2.2); the top bit clear and the next set give exactly 16
        // content octets and never zero.
        serial[0] = serial[0] & 0x7F | 0x40
        guard let serialNumber = BN_bin2bn(serial, Int32(serial.count), nil) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot make a serial number")
        }
        defer { BN_free(serialNumber) }
        let subject = X509_get_subject_name(certificate)
        let names = [("O", request.organization), ("CN", request.commonName)].filter { fitsCommonName($0.1) }
        guard X509_set_version(certificate, Int(X509_VERSION_3)) == 1,
            BN_to_ASN1_INTEGER(serialNumber, X509_get_serialNumber(certificate)) != nil,
            X509_gmtime_adj(X509_getm_notBefore(certificate), -backdateSeconds) != nil,
            X509_gmtime_adj(X509_getm_notAfter(certificate), request.validityDays * 86_400 - backdateSeconds) != nil,
            X509_set_pubkey(certificate, key) == 1,
            names.allSatisfy({ X509_NAME_add_entry_by_txt(subject, $0.0, MBSTRING_UTF8, $0.1, -1, -1, 0) == 1 }),
            X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0) } ?? subject) == 1
        else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot fill in the certificate")
        }
        var extensionContext = X509V3_CTX()
        X509V3_set_ctx(&extensionContext, issuer ?? certificate, certificate, nil, nil, 0)
        for (nid, value) in request.extensions {
            guard let item = X509V3_EXT_conf_nid(nil, &extensionContext, nid, value) else {
                throw TLSError.drainingQueue(.invalidConfiguration, "cannot encode extension \(value)")
            }
            defer { X509_EXTENSION_free(item) }
            guard X509_add_ext(certificate, item, -1) == 1 else {
                throw TLSError.drainingQueue(.invalidConfiguration, "cannot add extension \(value)")
            }
        }
    }
}
