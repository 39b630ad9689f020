import COpenSSL
import Foundation
import Testing

@testable import XMPPCore

/// A client and a server session wired back to back in memory, with
/// everything each side decrypted and the first error each side threw.
final class TLSPair {
    let client: TLSSession
    let server: TLSSession
    var clientReceived: [UInt8] = []
    var serverReceived: [UInt8] = []
    var clientError: TLSError?
    var serverError: TLSError?
    /// Splits every flight into pieces of this size before delivering it,
    /// so records arrive cut at arbitrary points.
    var deliverySize = Int.max

    init(client: TLSConfiguration, server: TLSConfiguration) throws {
        self.server = TLSSession(context: try TLSContext(configuration: server))
        self.client = TLSSession(context: try TLSContext(configuration: client))
    }

    convenience init(client: TLSConfiguration, certificate: SelfSignedCertificate) throws {
        try self.init(client: client, server: .server(certificate: certificate.source))
    }

    /// Moves ciphertext both ways until neither side has any left. A side
    /// that failed still has its alert delivered to the other.
    func run(sourceLocation: SourceLocation = #_sourceLocation) {
        for _ in 0..<200 {
            let toServer = client.takeOutput()
            let toClient = server.takeOutput()
            if toServer.isEmpty, toClient.isEmpty { return }
            if serverError == nil {
                for piece in toServer.chunks(of: deliverySize) {
                    do { serverReceived += try server.receive(ciphertext: piece) } catch {
                        serverError = error
                        break
                    }
                }
            }
            if clientError == nil {
                for piece in toClient.chunks(of: deliverySize) {
                    do { clientReceived += try client.receive(ciphertext: piece) } catch {
                        clientError = error
                        break
                    }
                }
            }
        }
        Issue.record("the sessions kept producing output", sourceLocation: sourceLocation)
    }

    /// Runs the handshake and checks that it succeeded on both sides.
    func handshake(sourceLocation: SourceLocation = #_sourceLocation) {
        run(sourceLocation: sourceLocation)
        #expect(clientError == nil, sourceLocation: sourceLocation)
        #expect(serverError == nil, sourceLocation: sourceLocation)
        #expect(client.isHandshakeComplete, sourceLocation: sourceLocation)
        #expect(server.isHandshakeComplete, sourceLocation: sourceLocation)
    }
}

extension SelfSignedCertificate {
    /// The certificate parsed by OpenSSL, for the duration of `body`.
    func withX509<Result>(_ body: (OpaquePointer) throws -> Result) throws -> Result {
        let certificate = try X509Certificates.readFirst(pem: certificatePEM)
        defer { X509_free(certificate) }
        return try body(certificate)
    }
}

extension Array where Element == UInt8 {
    /// Consecutive slices of at most `size` bytes, as arrays.
    func chunks(of size: Int) -> [[UInt8]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}

/// Calls `body` with a new directory under /tmp, removed afterwards.
func withTemporaryDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let path = "/tmp/swiftlet-tls-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}
