import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// Where a running server's certificate comes from, and the lines it logs
/// to tell clients how to reach it and what to trust.
@Suite struct ServerCertificateTests {
    /// A server on `dataDirectory` (listeners on port 0), started, stopped
    /// after `body`.
    private func withServer(
        dataDirectory: String, _ body: (Server, [SocketAddress], LogRecorder) throws -> Void
    ) throws {
        var config = ServerConfig()
        config.dataDirectory = dataDirectory
        config.listen = [ListenAddress("127.0.0.1:0")!]
        config.http.listen = []
        config.http.tlsListen = [ListenAddress("127.0.0.1:0")!]
        config.threads = 1
        let log = LogRecorder()
        let server = try Server(config: config, log: Logger(level: .info, label: "certificate", sink: log))
        defer { _ = server.stop(within: .seconds(5)) }
        try body(server, try server.start(), log)
    }

    private func temporaryDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("swiftlet-cert-\(UUID().uuidString)").path
    }

    @Test func aNewDataDirectoryGetsALocalCAAndSaysHowToReachAndTrustIt() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try withServer(dataDirectory: directory) { server, addresses, log in
            let authority = try #require(server.localAuthority)
            #expect(authority.certificatePath == directory + "/tls/localhost-ca.crt")
            let port = addresses[0].port
            let https = server.httpAddresses[0].port
            #expect(log.lines.contains { $0.hasSuffix("Connect: USER@localhost at 127.0.0.1 port \(port) (STARTTLS)") })
            #expect(log.lines.contains { $0.hasSuffix("Uploads: https://localhost:\(https)/upload/…") })
            #expect(
                log.lines.contains {
                    $0.contains("Trust: the local CA \(authority.certificatePath) (SHA-256 \(authority.fingerprint))")
                        && $0.hasSuffix("swiftletd trust")
                })
            // What the log promises: the CA makes the HTTPS upload host trusted.
            let rootPEM = try String(contentsOfFile: authority.certificatePath, encoding: .utf8)
            let client = try LiveClient(connectingTo: addresses[0], domain: "localhost")
            try client.openStream()
            _ = try client.startTLS(trusting: rootPEM)
            try client.close()
        }
    }

    @Test func aDataDirectoryFromBeforeTheCAKeepsItsSelfSignedCertificate() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let old = try SelfSignedCertificate.loadOrCreate(domain: "localhost", directory: directory + "/tls")
        try withServer(dataDirectory: directory) { server, addresses, log in
            #expect(server.localAuthority == nil)
            #expect(!FileManager.default.fileExists(atPath: directory + "/tls/localhost-ca.crt"))
            #expect(log.lines.contains { $0.contains("self-signed, from before the local CA; SHA-256 \(old.fingerprint)") })
            let pem = try String(contentsOfFile: old.certificatePath, encoding: .utf8)
            let client = try LiveClient(connectingTo: addresses[0], domain: "localhost")
            try client.openStream()
            _ = try client.startTLS(trusting: pem)
            try client.close()
        }
    }
}
