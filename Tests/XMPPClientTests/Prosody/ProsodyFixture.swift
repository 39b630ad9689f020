import Foundation
import XMPPClient
import XMPPCore
import XMPPNet
import XMPPTestSupport

/// Prosody from the system package, run in the foreground on a loopback
/// port of its own with a temporary data directory and a fresh self-signed
/// certificate: the "any standard server" the client kit must also work
/// with. Registration is open and unthrottled for loopback.
final class ProsodyFixture: ClientTestServer {
    static let executable = "/usr/bin/prosody"
    /// Whether Prosody is installed here.
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }
    /// Whether the tests must run (CI installs Prosody and sets this).
    static var isRequired: Bool { ProcessInfo.processInfo.environment["SWIFTLET_REQUIRE_INTEROP"] == "1" }

    let port: UInt16
    let fingerprint: CertificateFingerprint
    private let directory: String
    private let child: ChildProcess

    private init() throws {
        guard Self.isInstalled else {
            throw TestFailure("Prosody is not installed (apt-get install prosody)")
        }
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("swiftlet-prosody-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: directory + "/data", withIntermediateDirectories: true)
        let certificate = try SelfSignedCertificate.generate(domain: "localhost")
        try certificate.certificatePEM.write(toFile: directory + "/localhost.crt", atomically: true, encoding: .utf8)
        try certificate.privateKeyPEM.write(toFile: directory + "/localhost.key", atomically: true, encoding: .utf8)
        fingerprint = certificate.fingerprint
        port = try unusedPort()
        let configPath = directory + "/prosody.cfg.lua"
        try Self.config(directory: directory, port: port).write(toFile: configPath, atomically: true, encoding: .utf8)
        child = try ChildProcess(Self.executable, ["--config", configPath, "-F"])
        try waitUntilListening()
    }

    /// Starts Prosody, runs `body`, then stops Prosody and deletes its data.
    static func run(_ body: (ProsodyFixture) async throws -> Void) async throws {
        let fixture = try ProsodyFixture()
        defer { fixture.stop() }
        do {
            try await body(fixture)
        } catch {
            throw TestFailure("\(error)\n--- prosody output ---\n\(fixture.child.output)")
        }
    }

    func clientConfiguration(user: String, password: String, resource: String?) -> ClientConfiguration {
        testConfiguration(
            user, password: password, resource: resource, host: "127.0.0.1", port: port, fingerprint: fingerprint)
    }

    private func waitUntilListening() throws {
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            if Self.accepts(port: port) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        _ = child.kill()
        throw TestFailure("Prosody did not listen on port \(port) within 20 s:\n\(child.output)")
    }

    private static func accepts(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private func stop() {
        _ = child.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A config for Prosody 0.12: loopback only, STARTTLS offered, the
    /// modules the client kit uses, open registration without throttling.
    private static func config(directory: String, port: UInt16) -> String {
        """
        run_as_root = true
        pidfile = "\(directory)/prosody.pid"
        data_path = "\(directory)/data"
        log = { warn = "*console" }
        certificates = "\(directory)"
        interfaces = { "127.0.0.1" }
        c2s_ports = { \(port) }
        c2s_direct_tls_ports = {}
        legacy_ssl_ports = {}
        s2s_ports = {}
        component_ports = {}
        http_ports = {}
        https_ports = {}
        modules_enabled = {
            "roster", "saslauth", "tls", "disco", "ping", "register", "offline", "posix", "pep", "bookmarks"
        }
        modules_disabled = { "s2s" }
        authentication = "internal_hashed"
        c2s_require_encryption = false
        allow_registration = true
        registration_whitelist = { "127.0.0.1" }
        min_seconds_between_registrations = 0
        ssl = { certificate = "\(directory)/localhost.crt", key = "\(directory)/localhost.key" }
        VirtualHost "localhost"
        Component "conference.localhost" "muc"
            modules_enabled = { "muc_mam" }
        """
    }
}
