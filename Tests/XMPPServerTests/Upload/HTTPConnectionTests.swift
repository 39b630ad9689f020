import Foundation
import Testing
import XMPPCore
import XMPPNet
import XMPPTestSupport

@testable import XMPPServer

/// `HTTPConnection` without sockets: an in-memory transport and a manual
/// loop, so that splits, timeouts and flow control are exact.
@Suite struct HTTPConnectionTests {
    /// Records what the connection writes, and lets a test say how much
    /// output is still waiting for the "socket".
    final class Transport: ByteTransport {
        var delegate: (any ByteTransportDelegate)?
        var written: [UInt8] = []
        var closed = false
        var paused = false
        var queuedByteCount = 0
        /// Whether written bytes stay "queued" until the test drains them.
        var holdsOutput = false
        func write(_ bytes: UnsafeRawBufferPointer) {
            written += bytes
            if holdsOutput { queuedByteCount += bytes.count }
        }
        func close() { closed = true }
        func abort() { closed = true }
        func pauseReading() { paused = true }
        func resumeReading() { paused = false }
        var text: String { String(decoding: written, as: UTF8.self) }
    }

    /// Collects a body; answers 201 when it is complete.
    final class Sink: HTTPBodySink {
        var body: [UInt8] = []
        var finished = false
        var aborted = false
        func write(_ bytes: UnsafeRawBufferPointer) throws { body += bytes }
        func finish(_ completion: @escaping (HTTPResponse) -> Void) {
            finished = true
            completion(HTTPResponse(.created))
        }
        func abort() { aborted = true }
    }

    /// Takes PUT bodies into a `Sink`; answers anything else with 404.
    final class Responder: HTTPResponder {
        var requests: [HTTPRequestHead] = []
        let sink = Sink()
        func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
            requests.append(request)
            if request.method == "PUT" { connection.receiveBody(into: sink) } else {
                connection.respond(.text(.notFound, "no"))
            }
        }
    }

    private let loop = ManualLoop()
    private let log = Logger(level: .error, label: "test", sink: LogRecorder())
    private static let peer = SocketAddress(ip: "127.0.0.1", port: 40000)!

    private func connection(_ transport: Transport, _ responder: Responder) -> HTTPConnection {
        HTTPConnection(
            transport: transport, peer: Self.peer, loop: loop, responder: responder, tls: nil, timeout: .seconds(10),
            log: log)
    }

    private func feed(_ connection: HTTPConnection, _ bytes: some Collection<UInt8>) {
        Array(bytes).withUnsafeBytes { connection.receive($0) }
    }

    @Test func aPutBodySplitAnywhereArrivesWhole() {
        let request = Array("PUT /f HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world".utf8)
        for split in 0...request.count {
            let transport = Transport()
            let responder = Responder()
            let http = connection(transport, responder)
            feed(http, request[..<split])
            feed(http, request[split...])
            #expect(responder.sink.body == Array("hello world".utf8), "split at \(split)")
            #expect(responder.sink.finished)
            #expect(transport.text.hasPrefix("HTTP/1.1 201 Created\r\n"))
            #expect(transport.closed)
        }
    }

    @Test func bytesAfterTheBodyAreNotPartOfIt() {
        let transport = Transport()
        let responder = Responder()
        let http = connection(transport, responder)
        feed(http, Array("PUT /f HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nabGET / HTTP/1.1\r\n\r\n".utf8))
        #expect(responder.sink.body == Array("ab".utf8))
        #expect(responder.requests.count == 1, "one request per connection")
    }

    @Test func aStalledHeadOrBodyGets408() {
        let transport = Transport()
        let responder = Responder()
        let http = connection(transport, responder)
        feed(http, Array("GET / HT".utf8))
        loop.advance(by: .seconds(9))
        #expect(transport.written.isEmpty)
        loop.advance(by: .seconds(1))
        #expect(transport.text.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(transport.closed)

        let upload = Transport()
        let uploads = Responder()
        let put = connection(upload, uploads)
        feed(put, Array("PUT /f HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc".utf8))
        for _ in 0..<5 {
            loop.advance(by: .seconds(8))
            feed(put, Array("x".utf8))  // slow but moving: no timeout
        }
        #expect(upload.written.isEmpty)
        loop.advance(by: .seconds(10))
        #expect(upload.text.hasPrefix("HTTP/1.1 408 "))
        #expect(uploads.sink.aborted)
    }

    @Test func framingErrorsAnswerBeforeTheResponder() {
        for (fields, status) in [
            ("Transfer-Encoding: chunked\r\n", "501"), ("Content-Length: 1, 2\r\n", "400"),
            ("Expect: magic\r\n", "417"),
        ] {
            let transport = Transport()
            let responder = Responder()
            let http = connection(transport, responder)
            feed(http, Array("PUT /f HTTP/1.1\r\nHost: a\r\n\(fields)\r\n".utf8))
            #expect(transport.text.hasPrefix("HTTP/1.1 \(status) "), "\(fields)")
            #expect(responder.requests.isEmpty)
        }
    }

    @Test func aRefusedBodyIsReadBeforeClosingUnlessTheClientWaitsForContinue() {
        let transport = Transport()
        let responder = Responder()
        let http = connection(transport, responder)
        feed(http, Array("POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n12345".utf8))
        #expect(transport.text.hasPrefix("HTTP/1.1 404 "))
        #expect(!transport.closed, "5 body bytes are still to come")
        feed(http, Array("67890".utf8))
        #expect(transport.closed)

        let waiting = Transport()
        let other = connection(waiting, Responder())
        feed(other, Array("POST /f HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n".utf8))
        #expect(waiting.text.hasPrefix("HTTP/1.1 404 "))
        #expect(waiting.closed)
    }

    @Test func aHEADAnswerHasNoBody() {
        let transport = Transport()
        let http = connection(transport, Responder())
        feed(http, Array("HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(transport.text.hasPrefix("HTTP/1.1 404 "))
        #expect(transport.text.hasSuffix("\r\n\r\n"))
        #expect(transport.text.contains("Content-Length: 3\r\n"))
    }

    /// Answers every request with a file.
    final class FileResponder: HTTPResponder {
        let path: String
        init(path: String) { self.path = path }
        func respond(to request: HTTPRequestHead, on connection: HTTPConnection) {
            let descriptor = open(path, O_RDONLY)
            var status = stat()
            fstat(descriptor, &status)
            connection.sendFile(HTTPResponse(.ok), descriptor: descriptor, length: Int(status.st_size))
        }
    }

    /// A GET answered with a temporary file holding `content`, whose
    /// output waits for the test to drain it; the file is deleted after.
    private func download(
        _ content: [UInt8], _ body: (Transport, HTTPConnection) throws -> Void
    ) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("http-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: path, contents: Data(content))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let transport = Transport()
        transport.holdsOutput = true
        let http = HTTPConnection(
            transport: transport, peer: Self.peer, loop: loop, responder: FileResponder(path: path), tls: nil,
            timeout: .seconds(10), log: log)
        feed(http, Array("GET /f HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        try body(transport, http)
    }

    @Test func aDownloadWaitsForTheSocket() throws {
        let content = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try download(content) { transport, http in
            let headLength = transport.text.range(of: "\r\n\r\n")!.upperBound.utf16Offset(in: transport.text)
            var rounds = 0
            while !transport.closed {
                let queued = transport.queuedByteCount
                #expect(queued <= HTTPConnection.sendWindow + (64 << 10), "at most a window and a chunk wait")
                #expect(queued >= HTTPConnection.sendWindow || transport.written.count - headLength == content.count)
                transport.queuedByteCount = 0
                http.transportDidDrain()
                rounds += 1
            }
            #expect(rounds == 3, "1 MiB in windows of 256 KiB: one at once, three after a drain each")
            #expect(Array(transport.written[headLength...]) == content)
        }
    }

    @Test func aClientThatStopsReadingIsCutOff() throws {
        try download([UInt8](repeating: 0, count: 1 << 20)) { transport, _ in
            #expect(!transport.closed)
            loop.advance(by: .seconds(10))
            #expect(transport.closed)
        }
    }
}
