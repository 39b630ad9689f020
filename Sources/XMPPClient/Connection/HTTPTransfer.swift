#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import XMPPCore
import XMPPNet

/// One HTTP/1.1 exchange over its own connection (`Connection: close`), on
/// the client loop, with TLS for `https` URLs: what HTTP file upload needs
/// (XEP-0363: a PUT of the file, a GET to fetch one) without a dependency
/// beyond the system libraries.
///
/// Mutable state is touched only on the loop's thread; `run` hops there.
final class HTTPTransfer: ByteTransportDelegate, @unchecked Sendable {
    /// What came back.
    struct Response: Sendable {
        /// The status code, such as 201.
        var status: Int
        /// The body.
        var body: [UInt8]
    }

    /// The most response bytes kept (a download larger than this fails).
    static let maximumResponseSize = 256 << 20

    private let loop: EventLoop
    private let request: [UInt8]
    private let tlsContext: TLSContext?
    private var connection: TCPConnection?
    private var tls: SecureChannel?
    private var received: [UInt8] = []
    private var failure: XMPPClientError?
    private var done: CheckedContinuation<Response, any Error>?
    private var timer: EventLoop.Timer?

    private init(loop: EventLoop, request: [UInt8], tlsContext: TLSContext?) {
        self.loop = loop
        self.request = request
        self.tlsContext = tlsContext
    }

    /// Sends `method` to `url` with `body` and `headers`, and returns the
    /// response once the server closes the connection.
    /// - Parameters:
    ///   - trust: The TLS settings for an `https` URL, given its host (which
    ///     the certificate must name and SNI carries).
    ///   - timeout: The longest the whole exchange may take.
    /// - Throws: `XMPPClientError` (`.invalidRequest` for a URL this cannot
    ///   fetch, `.cannotConnect`, `.tls`, `.timedOut`).
    static func run(
        _ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8] = [],
        trust: @Sendable (_ host: String) throws(XMPPClientError) -> TLSContext, timeout: Duration
    ) async throws(XMPPClientError) -> Response {
        guard let target = HTTPURL(url) else { throw .invalidRequest("not an http or https URL: \(url)") }
        var head = "\(method) \(target.path) HTTP/1.1\r\nHost: \(target.hostHeader)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        let loop = try ClientLoop.get()
        let addresses: [SocketAddress]
        do {
            addresses = try SocketAddress.resolve(host: target.host, port: target.port)
        } catch {
            throw .cannotConnect(error.reason)
        }
        let transfer = HTTPTransfer(
            loop: loop, request: Array((head + "\r\n").utf8) + body,
            tlsContext: target.isSecure ? try trust(target.host) : nil)
        do {
            return try await withCheckedThrowingContinuation { continuation in
                loop.execute { transfer.start(addresses[0], timeout: timeout, continuation) }
            }
        } catch let error as XMPPClientError {
            throw error
        } catch {
            throw .cannotConnect("\(error)")
        }
    }

    private func start(
        _ address: SocketAddress, timeout: Duration, _ continuation: CheckedContinuation<Response, any Error>
    ) {
        done = continuation
        timer = loop.schedule(after: timeout) { self.fail(.timedOut) }
        TCPConnection.connect(to: address, on: loop, timeout: timeout) { result in
            switch result {
            case .success(let connection):
                guard self.done != nil else { return connection.close() }
                connection.handler = self
                self.connection = connection
                if let context = self.tlsContext {
                    self.tls = SecureChannel(TLSSession(context: context)) { [unowned self] in
                        self.connection?.write($0)
                    }
                    self.write(self.request)
                } else {
                    connection.write(self.request)
                }
            case .failure(let error):
                self.finish(.failure(XMPPClientError.cannotConnect("\(address): \(error)")))
            }
        }
    }

    private func write(_ bytes: [UInt8]) {
        guard let tls else { return connection?.write(bytes) ?? () }
        do {
            try tls.send(bytes)
        } catch {
            fail(.tls("\(error)"))
        }
    }

    private func fail(_ error: XMPPClientError) {
        if failure == nil { failure = error }
        connection?.close()
        if connection == nil { finish(.failure(error)) }
    }

    private func finish(_ result: Result<Response, any Error>) {
        timer?.cancel()
        timer = nil
        done?.resume(with: result)
        done = nil
    }

    func didRead(bytes: UnsafeRawBufferPointer) {
        guard let tls else {
            received += bytes
            return checkSize()
        }
        do {
            received += try tls.receive(bytes)
        } catch {
            return fail(.tls("\(error)"))
        }
        checkSize()
    }

    private func checkSize() {
        if received.count > Self.maximumResponseSize { fail(.invalidRequest("the response is too large")) }
    }

    func didClose(error: IOError?) {
        connection = nil
        if let failure { return finish(.failure(failure)) }
        guard let response = Self.parse(received) else {
            return finish(.failure(XMPPClientError.cannotConnect(error.map { "\($0)" } ?? "no HTTP response")))
        }
        finish(.success(response))
    }

    /// Reads a whole response: status line, headers, then the body (all
    /// of it, or `Content-Length` bytes when given).
    static func parse(_ bytes: [UInt8]) -> Response? {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let status = lines.first?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        guard let status, lines.first?.hasPrefix("HTTP/1.") == true else { return nil }
        var body = Array(bytes[(end + separator.count)...])
        let length = lines.dropFirst().lazy.compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first
        if let length {
            guard body.count >= length else { return nil }
            body = Array(body.prefix(length))
        }
        return Response(status: status, body: body)
    }
}

/// The parts of an `http` or `https` URL that a request needs.
struct HTTPURL {
    var isSecure: Bool
    var host: String
    var port: UInt16
    /// The path and query, `/` at least.
    var path: String

    /// `Host:` header value: the host, and the port when it is not the
    /// scheme's default.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Parses `url`; nil for another scheme or a malformed authority.
    init?(_ url: String) {
        let secure: Bool
        var rest: Substring
        if url.lowercased().hasPrefix("https://") {
            secure = true
            rest = url.dropFirst(8)
        } else if url.lowercased().hasPrefix("http://") {
            secure = false
            rest = url.dropFirst(7)
        } else {
            return nil
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        rest = rest.dropFirst(authority.count)
        var host = Substring(authority)
        var port: UInt16 = secure ? 443 : 80
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = UInt16(after.dropFirst()) else { return nil }
                port = value
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = UInt16(host[host.index(after: colon)...]) else { return nil }
            port = value
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains("@") else { return nil }
        self.isSecure = secure
        self.host = String(host)
        self.port = port
        self.path = rest.isEmpty ? "/" : (rest.hasPrefix("/") ? String(rest) : "/" + rest)
    }
}

import Foundation
