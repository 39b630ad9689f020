import COpenSSL
import Foundation
import Testing

@testable import XMPPCore

/// The generated certificate, parsed back with OpenSSL, and its files.
@Suite struct SelfSignedCertificateTests {
    @Test func certificateHasTheRequiredFields() throws {
        let generated = try SelfSignedCertificate.generate(domain: "chat.example")
        #expect(generated.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----\n"))
        #expect(generated.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        try generated.withX509 { certificate in
            #expect(X509_get_version(certificate) == Int(X509_VERSION_3))
            // SAN: the name and nothing else.
            #expect(X509_check_host(certificate, "chat.example", 0, 0, nil) == 1)
            #expect(X509_check_host(certificate, "other.example", 0, 0, nil) == 0)
            #expect(X509_check_host(certificate, "x.chat.example", 0, 0, nil) == 0)
            #expect(X509_check_ip_asc(certificate, "127.0.0.1", 0) == 0)
            #expect(Self.commonName(certificate) == "chat.example")
            // Self-signed: issuer is subject.
            #expect(
                X509_NAME_cmp(X509_get_issuer_name(certificate), X509_get_subject_name(certificate))
                    == 0)
            // basicConstraints CA:FALSE, EKU serverAuth only, keyUsage digitalSignature.
            let flags = X509_get_extension_flags(certificate)
            #expect(flags & UInt32(EXFLAG_BCONS) != 0, "basicConstraints present")
            #expect(flags & UInt32(EXFLAG_CA) == 0, "not a CA")
            #expect(X509_check_ca(certificate) == 0)
            #expect(flags & UInt32(EXFLAG_XKUSAGE) != 0)
            #expect(X509_get_extended_key_usage(certificate) == UInt32(XKU_SSL_SERVER))
            #expect(X509_get_key_usage(certificate) == UInt32(KU_DIGITAL_SIGNATURE))
            #expect(Self.isCritical(certificate, NID_basic_constraints))
            #expect(!Self.isCritical(certificate, NID_subject_alt_name))
            // ECDSA P-256, signed with SHA-256.
            #expect(X509_get_signature_nid(certificate) == NID_ecdsa_with_SHA256)
            #expect(EVP_PKEY_get_base_id(X509_get0_pubkey(certificate)) == EVP_PKEY_EC)
            #expect(EVP_PKEY_get_bits(X509_get0_pubkey(certificate)) == 256)
            // Valid now, for at most 825 days in all.
            var days: Int32 = 0
            var seconds: Int32 = 0
            #expect(
                ASN1_TIME_diff(
                    &days, &seconds, X509_get0_notBefore(certificate),
                    X509_get0_notAfter(certificate)) == 1)
            let validity = Int(days) * 86_400 + Int(seconds)
            #expect(validity == SelfSignedCertificate.validityDays * 86_400)
            #expect(validity <= 825 * 86_400)
            #expect(X509_cmp_current_time(X509_get0_notBefore(certificate)) < 0)
            #expect(X509_cmp_current_time(X509_get0_notAfter(certificate)) > 0)
            // A positive serial number of 16 bytes.
            let serial = X509_get0_serialNumber(certificate)
            #expect(ASN1_STRING_length(serial) == 16)
            #expect(ASN1_STRING_type(serial) == V_ASN1_INTEGER, "not V_ASN1_NEG_INTEGER")
            // The key belongs to the certificate.
            let key = try X509Certificates.privateKey(pem: generated.privateKeyPEM)
            defer { EVP_PKEY_free(key) }
            #expect(X509_check_private_key(certificate, key) == 1)
            // The fingerprint is the SHA-256 of the DER, as OpenSSL computes it.
            var digest = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            #expect(X509_digest(certificate, EVP_sha256(), &digest, &length) == 1)
            #expect(generated.fingerprint.bytes == digest)
        }
    }

    @Test func serialsAndKeysDiffer() throws {
        let first = try SelfSignedCertificate.generate(domain: "localhost")
        let second = try SelfSignedCertificate.generate(domain: "localhost")
        #expect(first.privateKeyPEM != second.privateKeyPEM)
        #expect(first.fingerprint != second.fingerprint)
        let serials = try [first, second].map { generated in
            try generated.withX509 { Self.bytes(X509_get0_serialNumber($0)) }
        }
        #expect(serials[0] != serials[1])
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"), ("192.168.1.20", "192.168.1.20"), ("[::1]", "::1"),
        ("fe80::1", "fe80::1"),
    ])
    func ipAddressLiteralGetsAnIPAddressSAN(domain: String, address: String) throws {
        let generated = try SelfSignedCertificate.generate(domain: domain)
        try generated.withX509 { certificate in
            #expect(X509_check_ip_asc(certificate, address, 0) == 1)
            let subjectNotChecked = UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)
            #expect(
                X509_check_host(certificate, address, 0, subjectNotChecked, nil) == 0,
                "not a DNS SAN")
            #expect(Self.commonName(certificate) == address)
        }
    }

    @Test func longDomainHasNoCommonNameAndACriticalSAN() throws {
        let domain = String(repeating: "a", count: 60) + ".example"
        let generated = try SelfSignedCertificate.generate(domain: domain)
        try generated.withX509 { certificate in
            #expect(Self.commonName(certificate) == nil)
            #expect(Self.isCritical(certificate, NID_subject_alt_name))
            #expect(X509_check_host(certificate, domain, 0, 0, nil) == 1)
        }
    }

    @Test(arguments: [
        "", "exa mple.com", "example.com,DNS:evil.com", "IP:1.2.3.4", "bücher.example",
        "-bad.example",
        "example..com", "example.com.", "[127.0.0.1]",
        String(repeating: "a", count: 64) + ".example",
    ])
    func invalidDomainsAreRefused(domain: String) {
        #expect(throws: TLSError.self) { _ = try SelfSignedCertificate.generate(domain: domain) }
    }

    @Test func fingerprintFormats() throws {
        let generated = try SelfSignedCertificate.generate(domain: "localhost")
        let text = generated.fingerprint.description
        #expect(text.count == 32 * 3 - 1)
        #expect(text.allSatisfy { $0 == ":" || $0.isHexDigit && !$0.isLowercase })
        #expect(CertificateFingerprint(hex: text) == generated.fingerprint)
        #expect(
            CertificateFingerprint(hex: text.lowercased().replacingOccurrences(of: ":", with: ""))
                == generated.fingerprint)
        #expect(
            try CertificateFingerprint(certificatePEM: generated.certificatePEM)
                == generated.fingerprint)
        #expect(CertificateFingerprint(hex: String(text.dropLast())) == nil)
        #expect(CertificateFingerprint(hex: String(text.dropLast()) + "G") == nil)
        #expect(CertificateFingerprint(bytes: [1, 2, 3]) == nil)
        #expect(
            CertificateFingerprint(bytes: [UInt8](repeating: 0x0A, count: 32))?.description
                .hasPrefix("0A:0A:") == true)
    }

    @Test func filesAreCreatedOnceWithAPrivateKeyMode() throws {
        try withTemporaryDirectory { root in
            let directory = root + "/certs"
            let created = try SelfSignedCertificate.loadOrCreate(
                domain: "localhost", directory: directory)
            #expect(created.wasCreated)
            #expect(created.privateKeyPath == directory + "/localhost.key")
            #expect(created.certificatePath == directory + "/localhost.crt")
            #expect(try Self.mode(created.privateKeyPath) == 0o600)
            #expect(try Self.mode(created.certificatePath) == 0o644)
            #expect(try Self.mode(directory) == 0o700)
            let keyBefore = try String(contentsOfFile: created.privateKeyPath, encoding: .utf8)

            let reused = try SelfSignedCertificate.loadOrCreate(
                domain: "localhost", directory: directory)
            #expect(!reused.wasCreated)
            #expect(reused.fingerprint == created.fingerprint)
            #expect(
                try String(contentsOfFile: created.privateKeyPath, encoding: .utf8) == keyBefore)

            let context = try TLSContext(configuration: .server(certificate: reused.source))
            #expect(context.certificateFingerprint == created.fingerprint)
        }
    }

    @Test func aLoneFileIsNeitherReusedNorOverwritten() throws {
        try withTemporaryDirectory { directory in
            let keyPath = directory + "/chat.example.key"
            #expect(FileManager.default.createFile(atPath: keyPath, contents: Data("mine".utf8)))
            #expect(throws: TLSError.self) {
                _ = try SelfSignedCertificate.loadOrCreate(
                    domain: "chat.example", directory: directory)
            }
            #expect(FileManager.default.contents(atPath: keyPath) == Data("mine".utf8))
            #expect(!FileManager.default.fileExists(atPath: directory + "/chat.example.crt"))
            #expect(throws: TLSError.self) {
                _ = try SelfSignedCertificate.loadOrCreate(
                    domain: "../chat.example", directory: directory)
            }
        }
    }

    /// The subject's CN, if any.
    static func commonName(_ certificate: OpaquePointer) -> String? {
        let name = X509_get_subject_name(certificate)
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0 else { return nil }
        let data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, index))
        return String(decoding: bytes(UnsafePointer(data)), as: UTF8.self)
    }

    static func isCritical(_ certificate: OpaquePointer, _ nid: Int32) -> Bool {
        let index = X509_get_ext_by_NID(certificate, nid, -1)
        return index >= 0 && X509_EXTENSION_get_critical(X509_get_ext(certificate, index)) == 1
    }

    static func bytes(_ string: UnsafePointer<ASN1_STRING>?) -> [UInt8] {
        Array(
            UnsafeBufferPointer(
                start: ASN1_STRING_get0_data(string), count: Int(ASN1_STRING_length(string))))
    }

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? Int)
    }
}

extension X509Certificates {
    /// Parses an unencrypted PEM private key; the caller frees it.
    static func privateKey(pem: String) throws -> OpaquePointer {
        let bio = try MemoryBIO.reading(pem)
        defer { BIO_free(bio) }
        return try #require(PEM_read_bio_PrivateKey(bio, nil, nil, nil))
    }
}
