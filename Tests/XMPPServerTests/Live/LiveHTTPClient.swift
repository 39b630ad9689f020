import Foundation
import XMPPCore
import XMPPNet
import XMPPTestSupport

/// A response as the live HTTP client read it.
struct LiveHTTPResponse {
    var status: Int
    /// Field names lowercased; a repeated field keeps its last value.
    var fields: [String: String]
    var body: [UInt8]
}

/// A minimal blocking HTTP/1.1 client over a real socket, for live upload
/// tests: one request per connection, optionally over TLS with the
/// server's certificate trusted. Shares no code with the server's parser.
final class LiveHTTPClient {
    private let socket: LiveSocket
    private var tls: TLSSession?
    /// Received and not yet consumed.
    private var buffer: [UInt8] = []
    private var closed = false

    /// Connects to `address`; with `certificatePEM`, completes a TLS
    /// handshake that verifies the certificate for `localhost`.
    init(connectingTo address: SocketAddress, trusting certificatePEM: String? = nil) throws {
        socket = try LiveSocket(connectingTo: address)
        guard let certificatePEM else { return }
        let verification = TLSVerification.requireValid(
            hostname: "localhost", additionalTrustRootsPEM: [certificatePEM])
        var configuration = TLSConfiguration.client(verification: verification)
        configuration.applicationProtocols = ["h2", "http/1.1"]
        let session = TLSSession(context: try TLSContext(configuration: configuration))
        let deadline = ContinuousClock.now + LiveClient.timeout
        while !session.isHandshakeComplete {
            try socket.write(session.takeOutput())
            guard let bytes = try socket.read(until: deadline) else {
                throw TestFailure("the server closed the connection during the TLS handshake")
            }
            buffer += try session.receive(ciphertext: bytes)
        }
        try socket.write(session.takeOutput())
        guard session.applicationProtocol == "http/1.1" else {
            throw TestFailure("ALPN chose \(session.applicationProtocol ?? "nothing"), not http/1.1")
        }
        tls = session
    }

    /// Sends raw bytes, through TLS when it is on.
    func send(_ bytes: [UInt8]) throws {
        guard let tls else { return try socket.write(bytes) }
        try tls.send(plaintext: bytes)
        try socket.write(tls.takeOutput())
    }

    /// Sends a request head: the request line, `Host`, `fields`, and the
    /// empty line.
    func sendHead(_ method: String, _ target: String, fields: [(String, String)] = []) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        try send(Array((text + "\r\n").utf8))
    }

    /// Reads one response: its head, then `Content-Length` bytes of body
    /// (none for a HEAD request, or for 1xx, 204 and 304), or up to the
    /// server's close without the field.
    func readResponse(toHEAD: Bool = false) throws -> LiveHTTPResponse {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.indices.dropLast(3).first {
                buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10
            }
            if headEnd == nil { guard try readMore() else { throw TestFailure("closed before a response") } }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else {
            throw TestFailure("bad status line in \(head)")
        }
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw TestFailure("bad field line '\(line)'") }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var response = LiveHTTPResponse(status: status, fields: fields, body: [])
        if toHEAD || status < 200 || status == 204 || status == 304 { return response }
        if let length = fields["content-length"].flatMap(Int.init) {
            while buffer.count < length {
                guard try readMore() else { throw TestFailure("closed after \(buffer.count) of \(length) bytes") }
            }
            response.body = Array(buffer.prefix(length))
            buffer.removeFirst(length)
        } else {
            while try readMore() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Whether the server closes the connection (within the timeout) with
    /// nothing more to read.
    func serverCloses() throws -> Bool {
        while try readMore() {}
        return buffer.isEmpty
    }

    /// Appends the next bytes; false at the server's close.
    private func readMore() throws -> Bool {
        guard !closed, let bytes = try socket.read(until: ContinuousClock.now + LiveClient.timeout) else {
            closed = true
            return false
        }
        buffer += try tls?.receive(ciphertext: bytes) ?? bytes
        return true
    }

    /// A whole exchange on a new connection: `method` to `target` with
    /// `fields` and `body`, and the response.
    static func exchange(
        _ address: SocketAddress, _ method: String, _ target: String, fields: [(String, String)] = [],
        body: [UInt8] = [], trusting certificatePEM: String? = nil
    ) throws -> LiveHTTPResponse {
        let client = try LiveHTTPClient(connectingTo: address, trusting: certificatePEM)
        try client.sendHead(method, target, fields: fields)
        if !body.isEmpty { try client.send(body) }
        return try client.readResponse(toHEAD: method == "HEAD")
    }
}
