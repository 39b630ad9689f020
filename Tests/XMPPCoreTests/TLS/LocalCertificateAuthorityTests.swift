import COpenSSL
import Foundation
import Testing

@testable import XMPPCore

/// The local certificate authority: its root, the server certificates it
/// issues and reissues, and the names its constraints let it vouch for,
/// checked by OpenSSL as a client would.
@Suite struct LocalCertificateAuthorityTests {
    /// A fresh `tls` directory under a temporary one, removed after `body`.
    private func inDirectory(_ body: (String) throws -> Void) throws {
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        try body(parent + "/tls")
    }

    private func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// Whether a client trusting only `root` accepts `files` for `hostname`.
    private func clientAccepts(_ files: CertificateFiles, root: LocalCertificateAuthority, hostname: String) throws -> Bool {
        let rootPEM = try String(contentsOfFile: root.certificatePath, encoding: .utf8)
        let pair = try TLSPair(
            client: .client(verification: .requireValid(hostname: hostname, additionalTrustRootsPEM: [rootPEM])),
            server: .server(certificate: files.source))
        pair.run()
        return pair.clientError == nil && pair.client.isHandshakeComplete
    }

    @Test func theRootIsAConstrainedCAMadeOnceWithAPrivateKey() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "chat.example", directory: directory, host: "box")
            #expect(root.wasCreated)
            #expect(root.certificatePath == directory + "/chat.example-ca.crt")
            #expect(try mode(root.privateKeyPath) == 0o600)
            #expect(try mode(directory) == 0o700)
            let again = try LocalCertificateAuthority.loadOrCreate(domain: "chat.example", directory: directory, host: "box")
            #expect(!again.wasCreated)
            #expect(again.fingerprint == root.fingerprint)
            let certificate = try X509Certificates.readFirst(path: root.certificatePath)
            defer { X509_free(certificate) }
            #expect(X509_check_ca(certificate) == 1)
            #expect(X509_get_ext_by_NID(certificate, NID_name_constraints, -1) >= 0)
            var deadline = time(nil) + 9 * 365 * 86_400
            #expect(X509_cmp_time(X509_get0_notAfter(certificate), &deadline) > 0, "valid for years")
        }
    }

    /// Verifiers look an issuer up by name: two roots of one name in a
    /// trust store (two data directories) would hide one another.
    @Test func everyRootHasANameOfItsOwn() throws {
        try inDirectory { first in
            try inDirectory { second in
                let one = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: first, host: "box")
                let other = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: second, host: "box")
                let names = try [one, other].map { root in
                    let certificate = try X509Certificates.readFirst(path: root.certificatePath)
                    defer { X509_free(certificate) }
                    return X509_NAME_hash_ex(X509_get_subject_name(certificate), nil, nil, nil)
                }
                #expect(names[0] != names[1])
            }
        }
    }

    @Test func itPermitsTheDomainLocalhostAndPrivateAddressesOnly() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "chat.example", directory: directory, host: "box")
            for name in ["chat.example", "upload.chat.example", "localhost", "127.0.0.1", "::1", "192.168.1.20",
                "10.1.2.3", "172.31.0.1", "100.100.1.1", "fd12::1", "fe80::1"]
            {
                #expect(root.permits(name), "\(name)")
            }
            for name in ["example", "otherchat.example", "bank.com", "8.8.8.8", "172.32.0.1", "2001:db8::1",
                "chat.example,DNS:x.localhost", ""]
            {
                #expect(!root.permits(name), "\(name)")
            }
        }
    }

    @Test func anIssuedCertificateIsTrustedThroughTheRootForEveryName() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: directory, host: "box")
            let names = ["localhost", "conference.localhost", "upload.localhost", "127.0.0.1", "192.168.7.9"]
            let files = try root.serverCertificate(for: names, directory: directory)
            #expect(files.wasCreated)
            #expect(files.certificatePath == directory + "/localhost.crt")
            #expect(try mode(files.privateKeyPath) == 0o600)
            for name in names { #expect(try clientAccepts(files, root: root, hostname: name), "\(name)") }
            #expect(try !clientAccepts(files, root: root, hostname: "elsewhere.localhost"))
            let certificate = try X509Certificates.readFirst(path: files.certificatePath)
            defer { X509_free(certificate) }
            var limit = time(nil) + 398 * 86_400
            #expect(X509_cmp_time(X509_get0_notAfter(certificate), &limit) < 0, "within Apple's 398 days")
            #expect(X509_check_ca(certificate) == 0)
        }
    }

    @Test func theCertificateIsReusedUntilItsNamesChange() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: directory, host: "box")
            let first = try root.serverCertificate(for: ["localhost", "127.0.0.1"], directory: directory)
            let same = try root.serverCertificate(for: ["localhost", "127.0.0.1"], directory: directory)
            #expect(!same.wasCreated)
            #expect(same.fingerprint == first.fingerprint)
            let moved = try root.serverCertificate(for: ["localhost", "127.0.0.1", "10.0.0.8"], directory: directory)
            #expect(moved.wasCreated, "a new address needs a new certificate")
            #expect(moved.fingerprint != first.fingerprint)
            #expect(try clientAccepts(moved, root: root, hostname: "10.0.0.8"))
            #expect(!FileManager.default.fileExists(atPath: moved.certificatePath + ".new"))
        }
    }

    @Test func namesOutsideTheRootAreLeftOut() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: directory, host: "box")
            let files = try root.serverCertificate(for: ["localhost", "203.0.113.5", "bank.com"], directory: directory)
            #expect(try clientAccepts(files, root: root, hostname: "localhost"))
            let certificate = try X509Certificates.readFirst(path: files.certificatePath)
            defer { X509_free(certificate) }
            #expect(X509_check_ip_asc(certificate, "203.0.113.5", 0) == 0)
            #expect(X509_check_host(certificate, "bank.com", 0, 0, nil) == 0)
        }
    }

    /// The constraints hold even against the root's own key: a certificate
    /// for another site, signed with it, is refused by OpenSSL.
    @Test func theRootsKeyCannotVouchForAnotherSite() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: directory, host: "box")
            let rootCertificate = try X509Certificates.readFirst(path: root.certificatePath)
            defer { X509_free(rootCertificate) }
            let rootKey = try CertificateBuilder.readPrivateKey(path: root.privateKeyPath)
            defer { EVP_PKEY_free(rootKey) }
            let key = try CertificateBuilder.newKey()
            defer { EVP_PKEY_free(key) }
            let request = CertificateBuilder.Request(
                commonName: "bank.com", validityDays: 30,
                extensions: [(NID_ext_key_usage, "serverAuth"), (NID_subject_alt_name, "DNS:bank.com")])
            let forged = try CertificateBuilder.certificate(request, key: key, issuer: (rootCertificate, rootKey))
            defer { X509_free(forged) }
            let forgedPEM = try CertificateBuilder.pem(certificate: forged)
            let keyPEM = try CertificateBuilder.pem(privateKey: key)
            let rootPEM = try String(contentsOfFile: root.certificatePath, encoding: .utf8)
            let pair = try TLSPair(
                client: .client(verification: .requireValid(hostname: "bank.com", additionalTrustRootsPEM: [rootPEM])),
                server: .server(certificate: .pem(certificateChain: forgedPEM, privateKey: keyPEM)))
            pair.run()
            #expect(pair.clientError != nil)
            #expect(String(describing: pair.clientError).contains("permitted subtree violation"), "\(String(describing: pair.clientError))")
        }
    }

    @Test func aCertificateTheRootDidNotIssueIsLeftAlone() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: directory, host: "box")
            let own = try SelfSignedCertificate.generate(domain: "localhost")
            try own.certificatePEM.write(toFile: directory + "/localhost.crt", atomically: true, encoding: .utf8)
            try own.privateKeyPEM.write(toFile: directory + "/localhost.key", atomically: true, encoding: .utf8)
            let files = try root.serverCertificate(for: ["localhost", "127.0.0.1"], directory: directory)
            #expect(!files.wasCreated)
            #expect(files.fingerprint == own.fingerprint)
        }
    }

    @Test func aCertificateWhoseKeyWasLostIsReissued() throws {
        try inDirectory { directory in
            let root = try LocalCertificateAuthority.loadOrCreate(domain: "localhost", directory: directory, host: "box")
            let first = try root.serverCertificate(for: ["localhost"], directory: directory)
            let stranger = try SelfSignedCertificate.generate(domain: "localhost")
            try stranger.privateKeyPEM.write(toFile: first.privateKeyPath, atomically: true, encoding: .utf8)
            let second = try root.serverCertificate(for: ["localhost"], directory: directory)
            #expect(second.wasCreated, "a key that does not match the certificate is replaced with both")
            #expect(try clientAccepts(second, root: root, hostname: "localhost"))
        }
    }
}
