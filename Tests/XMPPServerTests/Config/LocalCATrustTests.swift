import Foundation
import Testing
import XMPPCore
import XMPPTestSupport

@testable import XMPPServer

/// `swiftletd trust`: the instructions, the Apple profile, and install and
/// uninstall against a system store and an NSS database in a temporary
/// home (the real ones are never touched).
@Suite struct LocalCATrustTests {
    /// A data directory and a home under one temporary directory, removed after `body`.
    private func inTemporaryDirectory(_ body: (_ config: ServerConfig, _ places: LocalCATrust.Places) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-trust-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        var config = ServerConfig()
        config.domain = "chat.example"
        config.dataDirectory = root + "/data"
        var places = LocalCATrust.Places()
        places.systemStore = root + "/ca-certificates"
        places.updateCommand = ["/bin/true"]
        places.home = root + "/home"
        try FileManager.default.createDirectory(atPath: places.systemStore, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: places.home, withIntermediateDirectories: true)
        try body(config, places)
    }

    static let certutilPath: String? = ["/usr/bin/certutil", "/usr/local/bin/certutil"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Runs `certutil` with `arguments`; its status and output.
    private func certutil(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.certutilPath))
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test func theInstructionsNameTheRootAndEveryStore() throws {
        try inTemporaryDirectory { config, places in
            let trust = try LocalCATrust(config: config, places: places)
            let text = trust.instructions()
            let root = config.dataDirectory + "/tls/chat.example-ca.crt"
            #expect(trust.authority.certificatePath == root)
            #expect(text.contains("SHA-256 \(trust.authority.fingerprint)"))
            #expect(text.contains("cp \(root) \(places.systemStore)/\(trust.storeName).crt && /bin/true"))
            #expect(text.contains("certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n \(trust.storeName) -i \(root)"))
            #expect(text.contains("xcrun simctl keychain booted add-root-cert \(root)"))
            #expect(text.contains("https://127.0.0.1:5281/ca.mobileconfig"))
            #expect(trust.storeName.hasPrefix("swiftlet-chat.example-"))
            let again = try LocalCATrust(config: config, places: places)
            #expect(again.authority.fingerprint == trust.authority.fingerprint, "the root is made once")
        }
    }

    @Test func aServerOnEveryAddressOffersTheProfileAtItsNetworkAddresses() throws {
        var config = ServerConfig()
        config.http.tlsListen = [ListenAddress("0.0.0.0:5281")!]
        config.http.listen = [ListenAddress("127.0.0.1:5280")!]
        #expect(
            LocalCATrust.profileURLs(config, lanAddresses: ["192.168.1.20"])
                == ["https://192.168.1.20:5281/ca.mobileconfig", "http://127.0.0.1:5280/ca.mobileconfig"])
    }

    @Test func thereIsNothingToTrustForAConfiguredCertificateOrAnOldSelfSignedOne() throws {
        try inTemporaryDirectory { config, places in
            var configured = config
            configured.tls.certificate = "/etc/ssl/chat.pem"
            configured.tls.privateKey = "/etc/ssl/chat.key"
            #expect(throws: LocalCATrust.Unavailable.self) { try LocalCATrust(config: configured, places: places) }
            try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
            _ = try SelfSignedCertificate.loadOrCreate(domain: config.domain, directory: config.tlsDirectory)
            let error = try #require(throws: LocalCATrust.Unavailable.self) { try LocalCATrust(config: config, places: places) }
            #expect(error.description.contains("self-signed, from before the local CA"))
            #expect(config.localAuthority == nil, "no root made beside the old certificate")
        }
    }

    @Test func theProfileCarriesTheRoot() throws {
        try inTemporaryDirectory { config, places in
            let trust = try LocalCATrust(config: config, places: places)
            let text = try AppleConfigurationProfile.rootCertificate(trust.authority)
            let plist = try #require(
                try PropertyListSerialization.propertyList(from: Data(text.utf8), format: nil) as? [String: Any])
            #expect(plist["PayloadType"] as? String == "Configuration")
            let payload = try #require((plist["PayloadContent"] as? [[String: Any]])?.first)
            #expect(payload["PayloadType"] as? String == "com.apple.security.root")
            let der = try #require(payload["PayloadContent"] as? Data)
            #expect(CertificateFingerprint(certificateDER: Array(der)) == trust.authority.fingerprint)
            #expect(text == (try AppleConfigurationProfile.rootCertificate(trust.authority)), "the same profile each time")
        }
    }

    @Test(.enabled(if: LocalCATrustTests.certutilPath != nil, "certutil is not installed (apt-get install libnss3-tools)"))
    func installAndUninstallTheSystemStoreAndAnNSSDatabase() throws {
        try inTemporaryDirectory { config, places in
            let database = places.home + "/.pki/nssdb"
            try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
            #expect(try certutil(["-N", "--empty-password", "-d", "sql:\(database)"]).0 == 0)
            let trust = try LocalCATrust(config: config, places: places)
            let installed = trust.install()
            #expect(installed.contains(.done("added \(trust.systemStoreFile) to the system store")), "\(installed)")
            #expect(installed.contains(.done("added to \(database)")), "\(installed)")
            #expect(FileManager.default.contentsEqual(atPath: trust.systemStoreFile, andPath: trust.authority.certificatePath))
            #expect(FileManager.default.fileExists(atPath: trust.profileFile))
            let (status, listing) = try certutil(["-d", "sql:\(database)", "-L", "-n", trust.storeName])
            #expect(status == 0)
            #expect(listing.contains("Certificate Trust Flags"), "\(listing)")

            let removed = trust.uninstall()
            #expect(removed.contains(.done("removed \(trust.systemStoreFile) from the system store")), "\(removed)")
            #expect(removed.contains(.done("removed from \(database)")), "\(removed)")
            #expect(!FileManager.default.fileExists(atPath: trust.systemStoreFile))
            #expect(!FileManager.default.fileExists(atPath: trust.profileFile))
            #expect(try certutil(["-d", "sql:\(database)", "-L", "-n", trust.storeName]).0 != 0)
        }
    }
}
