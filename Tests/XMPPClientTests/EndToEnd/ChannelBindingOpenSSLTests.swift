import Foundation
import Glibc
import Testing
import XMPPCore
import XMPPTestSupport

/// Test vectors for TLS channel binding (`TLSSession+ChannelBinding.swift`)
/// from an implementation that shares no code with ours: OpenSSL's own
/// command-line tool. `openssl s_client` connects to a server session of
/// ours on a loopback ephemeral port, and each binding the session computes
/// is compared with what the tool derives:
///
/// - `tls-exporter` (RFC 9266): `-keymatexport` exports with no context. In
///   TLS 1.3 that is the empty context RFC 9266 asks for (RFC 8446 §7.5), so
///   the tool's value must be ours. In TLS 1.2 the two differ (RFC 5705 §4),
///   so the exporter is derived again with `openssl kdf TLS1-PRF` from the
///   master secret and the two randoms s_client shows: without a context it
///   must give s_client's value (the inputs are right), with an empty one
///   ours.
/// - `tls-server-end-point` (RFC 5929 §4.1): `openssl x509 -fingerprint` of
///   the certificate as s_client received it, with the hash of its
///   signature, SHA-256 for SHA-1; for our ECDSA certificate and three that
///   `openssl req` makes.
/// - TLS 1.2 without the extended master secret: s_client has no `-no_ems`,
///   so a configuration file turns the extension off; no `tls-exporter`.
///
/// Skipped when `openssl` (version 3, for `kdf`) cannot be run, unless
/// `SWIFTLET_REQUIRE_INTEROP=1` (as CI sets it), which makes that a failure.
@Suite(.serialized, .timeLimit(.clientSuite))
struct ChannelBindingOpenSSLTests {
    static let label = "EXPORTER-Channel-Binding"
    static let available = (try? openssl(["version"]))?.hasPrefix("OpenSSL 3") == true
    static let shouldRun = available || ProcessInfo.processInfo.environment["SWIFTLET_REQUIRE_INTEROP"] == "1"

    /// A server certificate: ours, or one `openssl req` makes.
    enum Certificate: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case ecdsaP256SHA256, rsaSHA256, ecdsaP384SHA384, rsaSHA1

        var testDescription: String { rawValue }

        /// The signature algorithm as s_client names it.
        var signatureAlgorithm: String {
            switch self {
            case .ecdsaP256SHA256: "ecdsa-with-SHA256"
            case .rsaSHA256: "RSA-SHA256"
            case .ecdsaP384SHA384: "ecdsa-with-SHA384"
            case .rsaSHA1: "RSA-SHA1"
            }
        }

        /// The hash of `tls-server-end-point`: the signature's, SHA-256
        /// instead of SHA-1.
        var endPointHash: String { self == .ecdsaP384SHA384 ? "sha384" : "sha256" }

        /// The certificate and key; `openssl req` writes them in `directory`.
        func make(in directory: String) throws -> TLSCertificateSource {
            let key: [String]
            switch self {
            case .ecdsaP256SHA256:
                return try SelfSignedCertificate.generate(domain: "localhost").source
            case .rsaSHA256: key = ["-newkey", "rsa:2048", "-sha256"]
            case .ecdsaP384SHA384: key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384", "-sha384"]
            case .rsaSHA1: key = ["-newkey", "rsa:2048", "-sha1"]
            }
            let (certificatePath, keyPath) = (directory + "/cert.pem", directory + "/key.pem")
            _ = try openssl(
                ["req", "-x509", "-nodes", "-subj", "/CN=localhost", "-days", "1", "-keyout", keyPath,
                 "-out", certificatePath] + key)
            return .pemFiles(certificateChainPath: certificatePath, privateKeyPath: keyPath)
        }
    }

    /// Both bindings of one connection, at each version and with each
    /// certificate, against the tool's.
    @Test(
        .enabled(if: shouldRun, "openssl 3 is not installed: apt-get install openssl"),
        arguments: [TLSVersion.tls1_3, .tls1_2], Certificate.allCases)
    func bindingsMatchOpenSSL(version: TLSVersion, certificate: Certificate) throws {
        guard requireOpenSSL() else { return }
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let (server, report) = try Self.connect(
                version: version, certificate: try certificate.make(in: directory), in: directory)
            // "New, TLSv1.3, Cipher is TLS_AES_256_GCM_SHA384"
            #expect(report.field("New, ")?.hasPrefix(version.description + ",") == true, "\(report.output)")
            #expect(report.field("sigalg:") == certificate.signatureAlgorithm)

            let endPoint = try #require(server.channelBindingData(for: .tlsServerEndPoint))
            let pem = try #require(report.certificatePEM, "\(report.output)")
            let fingerprint = try Self.openssl(
                ["x509", "-noout", "-fingerprint", "-" + certificate.endPointHash], input: pem)
            // RFC 5929 §4.1: SHA-256 where the signature used SHA-1.
            #expect(endPoint == hexBytes(fingerprint.split(separator: "=").last ?? ""))
            #expect(endPoint.count == (certificate.endPointHash == "sha384" ? 48 : 32))

            let exporter = try #require(server.channelBindingData(for: .tlsExporter))
            let printed = try #require(report.field("Keying material:").flatMap(hexBytes), "\(report.output)")
            guard version == .tls1_2 else {
                #expect(exporter == printed)
                return
            }
            #expect(report.field("Extended master secret:") == "yes")
            #expect(exporter != printed, "RFC 9266 exports with an empty context, s_client with none")
            let recomputed = try Self.tls12Exporters(from: report)
            #expect(recomputed.noContext == printed, "\(report.output)")
            #expect(recomputed.emptyContext == exporter)
        }
    }

    /// RFC 9266 §3: with TLS 1.2, no `tls-exporter` unless the extended
    /// master secret (RFC 7627) was negotiated; the end point stays.
    @Test(.enabled(if: shouldRun, "openssl 3 is not installed: apt-get install openssl"))
    func tls12WithoutExtendedMasterSecretHasNoExporter() throws {
        guard requireOpenSSL() else { return }
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let configuration = directory + "/no-ems.cnf"
            try """
            openssl_conf = init
            [init]
            ssl_conf = ssl
            [ssl]
            system_default = options
            [options]
            Options = -ExtendedMasterSecret
            """.write(toFile: configuration, atomically: false, encoding: .utf8)
            let (server, report) = try Self.connect(
                version: .tls1_2, certificate: try Certificate.ecdsaP256SHA256.make(in: directory), in: directory,
                environment: ["OPENSSL_CONF=" + configuration])
            #expect(report.field("Extended master secret:") == "no", "\(report.output)")
            #expect(server.channelBindingData(for: .tlsExporter) == nil)
            #expect(server.channelBindingData(for: .tlsServerEndPoint) != nil)
        }
    }

    /// Records a failure when CI requires the tool and it is missing;
    /// returns whether it is there.
    private func requireOpenSSL(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        if !Self.available {
            Issue.record("SWIFTLET_REQUIRE_INTEROP=1 but openssl 3 cannot be run", sourceLocation: sourceLocation)
        }
        return Self.available
    }

    /// Runs `openssl s_client` at `version` (with `environment`, `NAME=value`
    /// pairs) against a server session of ours with `certificate`; returns
    /// the session, its handshake complete, and what s_client printed.
    ///
    /// Standard error goes to a file in `directory`: it is unbuffered, and
    /// would otherwise land inside the lines of the buffered standard output.
    private static func connect(
        version: TLSVersion, certificate: TLSCertificateSource, in directory: String, environment: [String] = []
    ) throws -> (TLSSession, SClientReport) {
        let listener = try LoopbackListener()
        let errors = directory + "/s_client.err"
        let client = try ChildProcess(
            "/bin/sh",
            ["-c", "exec /usr/bin/env \"$@\" 2>'\(errors)'", "sh"] + environment + [
                "openssl", "s_client", "-connect", "127.0.0.1:\(listener.address.port)",
                version == .tls1_2 ? "-tls1_2" : "-tls1_3", "-keymatexport", label, "-keymatexportlen", "32",
                "-showcerts", "-msg",
            ])
        let peer = try listener.accept()
        defer { close(peer) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let server = TLSSession(context: try TLSContext(configuration: .server(certificate: certificate)))
        LoopbackListener.answerHandshake(server, on: peer)
        let outcome = client.wait(timeout: 20)
        guard server.isHandshakeComplete, server.protocolVersion == version, outcome.status == 0,
            !outcome.timedOut
        else {
            let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw TestFailure(
                "no \(version) handshake with s_client (status \(outcome.status)):\n\(outcome.output)\n\(stderr)")
        }
        return (server, SClientReport(output: outcome.output))
    }

    /// The TLS 1.2 exporter (RFC 5705 §4) derived by `openssl kdf` from what
    /// s_client printed: the PRF of the master secret over the label, the
    /// client and server randoms, and then the context's length and bytes
    /// when there is a context; the PRF hash is the cipher suite's.
    private static func tls12Exporters(
        from report: SClientReport
    ) throws -> (noContext: [UInt8], emptyContext: [UInt8]) {
        guard let masterSecret = report.field("Master-Key:").flatMap(hexBytes), masterSecret.count == 48,
            let clientRandom = report.handshakeRandom("ClientHello"),
            let serverRandom = report.handshakeRandom("ServerHello"),
            let cipher = report.field("Cipher is ")
        else { throw TestFailure("no master secret, randoms or cipher:\n\(report.output)") }
        let seed = Array(label.utf8) + clientRandom + serverRandom
        func prf(_ seed: [UInt8]) throws -> [UInt8] {
            let output = try openssl([
                "kdf", "-keylen", "32", "-kdfopt", "digest:" + (cipher.hasSuffix("SHA384") ? "SHA384" : "SHA256"),
                "-kdfopt", "hexsecret:" + Hex.encode(masterSecret), "-kdfopt", "hexseed:" + Hex.encode(seed),
                "TLS1-PRF",
            ])
            guard let bytes = hexBytes(output) else { throw TestFailure("openssl kdf printed \(output)") }
            return bytes
        }
        return (try prf(seed), try prf(seed + [0, 0]))
    }

    /// Runs `openssl` with `arguments` and `input`; its output.
    /// - Throws: `TestFailure` unless it exits with status 0 within 30 s.
    private static func openssl(_ arguments: [String], input: String = "") throws -> String {
        let outcome = try ChildProcess("/usr/bin/env", ["openssl"] + arguments, input: input).wait(timeout: 30)
        guard outcome.status == 0, !outcome.timedOut else {
            throw TestFailure("openssl \(arguments.joined(separator: " ")): \(outcome.status)\n\(outcome.output)")
        }
        return outcome.output
    }
}

/// What `openssl s_client -showcerts -msg` printed.
private struct SClientReport {
    let output: String

    var lines: [Substring] { output.split(separator: "\n") }

    /// The rest of the first line containing `name`, trimmed.
    func field(_ name: String) -> String? {
        guard let line = lines.first(where: { $0.contains(name) }), let range = line.range(of: name) else {
            return nil
        }
        return line[range.upperBound...].trimmingCharacters(in: .whitespaces)
    }

    /// The first certificate s_client received, as PEM.
    var certificatePEM: String? {
        guard let start = output.range(of: "-----BEGIN CERTIFICATE-----"),
            let end = output.range(of: "-----END CERTIFICATE-----", range: start.upperBound..<output.endIndex)
        else { return nil }
        return String(output[start.lowerBound..<end.upperBound]) + "\n"
    }

    /// The random of the handshake message `name` (`ClientHello` or
    /// `ServerHello`), from the hex lines `-msg` prints under its header:
    /// after the type, the 3-byte length and the version.
    func handshakeRandom(_ name: String) -> [UInt8]? {
        let lines = lines
        guard let header = lines.firstIndex(where: { $0.contains(" Handshake [") && $0.hasSuffix("], " + name) })
        else { return nil }
        let message = lines[(header + 1)...].prefix { $0.hasPrefix("    ") && hexBytes($0) != nil }
        guard let bytes = hexBytes(message.joined(separator: " ")), bytes.count >= 38 else { return nil }
        return Array(bytes[6..<38])
    }
}

/// The bytes of hex text, ignoring the colons and white space OpenSSL
/// puts between them; `nil` for anything else.
private func hexBytes(_ text: some StringProtocol) -> [UInt8]? {
    let digits = String(text.filter { $0 != ":" && !$0.isWhitespace })
    return digits.isEmpty ? nil : Hex.decode(digits)
}
