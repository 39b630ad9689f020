import Testing

@testable import XMPPServer

/// The HTTP/1.1 request head parser, without sockets: every split point,
/// the bounds, and malformed heads.
@Suite struct HTTPRequestParserTests {
    /// Feeds `text` in the pieces `splits` cuts it into.
    private func parse(
        _ text: String, splits: [Int] = [], limits: HTTPRequestParser.Limits = .init()
    ) -> (HTTPRequestParser.Outcome, consumedAll: Bool) {
        var parser = HTTPRequestParser(limits: limits)
        let bytes = Array(text.utf8)
        var start = 0
        for end in splits + [bytes.count] where end >= start {
            let outcome = bytes[start..<end].withUnsafeBytes { parser.feed($0) }
            if case .complete(let head, let bodyStart) = outcome {
                return (.complete(head, bodyStart: start + bodyStart), true)
            }
            if outcome != .needMore { return (outcome, true) }
            start = end
        }
        return (.needMore, false)
    }

    private static let upload =
        "PUT /upload/abc/a%20b.jpg?v=1.2.3 HTTP/1.1\r\nHost: localhost:5280\r\nContent-Length: 5\r\n"
        + "Content-Type:  image/jpeg \r\n\r\nhello"

    @Test func aRequestHeadIsReadWithItsFields() throws {
        let (outcome, _) = parse(Self.upload)
        guard case .complete(let head, let bodyStart) = outcome else {
            Issue.record("not complete: \(outcome)")
            return
        }
        #expect(head.method == "PUT")
        #expect(head.target == "/upload/abc/a%20b.jpg?v=1.2.3")
        #expect(head.path == "/upload/abc/a%20b.jpg")
        #expect(head.query == "v=1.2.3")
        #expect(head.minorVersion == 1)
        #expect(head[field: "content-type"] == "image/jpeg", "names are case-insensitive, values trimmed")
        #expect(head[field: "HOST"] == "localhost:5280")
        #expect(head.contentLength == 5)
        #expect(bodyStart == Self.upload.utf8.count - 5)
    }

    @Test func everySplitPointGivesTheSameHead() throws {
        let (whole, _) = parse(Self.upload)
        let count = Self.upload.utf8.count
        for split in 0...count {
            #expect(parse(Self.upload, splits: [split]).0 == whole, "split at \(split)")
        }
        let bytewise = parse(Self.upload, splits: Array(0...count))
        #expect(bytewise.0 == whole)
    }

    @Test func aHeadWithoutFieldsIsHTTP10() {
        let (outcome, _) = parse("GET / HTTP/1.0\r\n\r\n")
        guard case .complete(let head, let bodyStart) = outcome else {
            Issue.record("not complete: \(outcome)")
            return
        }
        #expect(head.minorVersion == 0)
        #expect(head.fields.isEmpty)
        #expect(bodyStart == 18)
    }

    @Test func anIncompleteHeadNeedsMore() {
        for text in ["", "GET", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r"] {
            #expect(parse(text).0 == .needMore, "\(text.debugDescription)")
        }
    }

    @Test func emptyLinesBeforeTheRequestAreSkippedAFewTimes() {
        guard case .complete = parse("\r\n\r\nGET / HTTP/1.0\r\n\r\n", splits: [1, 3]).0 else {
            Issue.record("leading empty lines were not skipped")
            return
        }
        #expect(parse(String(repeating: "\r\n", count: 5) + "GET / HTTP/1.0\r\n\r\n").0.status == .badRequest)
    }

    @Test func aLongRequestLineIs414() {
        let limits = HTTPRequestParser.Limits(maxRequestLineLength: 100)
        let target = "/" + String(repeating: "a", count: 200)
        #expect(parse("GET \(target) HTTP/1.1\r\n", limits: limits).0.status == .uriTooLong)
        // Refused while it arrives, before its end.
        #expect(parse("GET \(target)", limits: limits).0.status == .uriTooLong)
        let fits = "GET /" + String(repeating: "a", count: 80) + " HTTP/1.1\r\nHost: a\r\n\r\n"
        guard case .complete = parse(fits, limits: limits).0 else {
            Issue.record("a line within the limit was refused")
            return
        }
        #expect(parse("GET /\(String(repeating: "b", count: 9000)) HTTP/1.1\r\n").0.status == .uriTooLong)
    }

    @Test func tooManyOrTooLargeFieldsAre431() {
        let many = (0..<65).map { "X-\($0): y\r\n" }.joined()
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n\(many)\r\n").0.status == .requestHeaderFieldsTooLarge)
        let sixtyFour = (0..<63).map { "X-\($0): y\r\n" }.joined()
        guard case .complete = parse("GET / HTTP/1.1\r\nHost: a\r\n\(sixtyFour)\r\n").0 else {
            Issue.record("64 fields were refused")
            return
        }
        let large = "X-Big: " + String(repeating: "z", count: 17_000) + "\r\n"
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n\(large)").0.status == .requestHeaderFieldsTooLarge)
    }

    @Test(arguments: [
        "GET / HTTP/1.1\nHost: a\r\n\r\n",  // bare LF
        "GET / HTTP/1.1\r\nHost: a\rX\r\n\r\n",  // bare CR
        "GET /  HTTP/1.1\r\nHost: a\r\n\r\n",  // two spaces
        "GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n",
        "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",  // method not a token
        "GET http://example.org/ HTTP/1.1\r\nHost: a\r\n\r\n",  // absolute form
        "GET /a\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n",  // space before the colon
        "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  // obsolete folding
        "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\u{01}b\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",  // no Host
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  // two Hosts
        "GET / FTP/1.1\r\nHost: a\r\n\r\n",
    ])
    func malformedHeadsAre400(_ text: String) {
        #expect(parse(text).0.status == .badRequest)
    }

    @Test func otherHTTPVersionsAre505() {
        #expect(parse("GET / HTTP/2.0\r\nHost: a\r\n\r\n").0.status == .httpVersionNotSupported)
        #expect(parse("GET / HTTP/0.9\r\n\r\n").0.status == .httpVersionNotSupported)
    }

    @Test func contentLengthMustBeOneDecimalNumber() {
        func length(_ field: String) -> Int? {
            guard case .complete(let head, _) = parse("PUT / HTTP/1.1\r\nHost: a\r\n\(field)\r\n\r\n").0 else {
                return -1
            }
            return head.contentLength
        }
        #expect(length("Content-Length: 0") == 0)
        #expect(length("content-length: 10485760") == 10_485_760)
        #expect(length("Content-Length: -1") == nil)
        #expect(length("Content-Length: +5") == nil)
        #expect(length("Content-Length: 1e3") == nil)
        #expect(length("Content-Length: 5, 5") == nil)
        #expect(length("Content-Length: 5\r\nContent-Length: 5") == nil)
        #expect(length("Content-Length: 9999999999999999999") == nil)
        #expect(length("X-Other: 1") == nil)
    }
}

extension HTTPRequestParser.Outcome {
    /// The status of a failure, nil otherwise.
    var status: HTTPStatus? {
        if case .failed(let status, _) = self { return status }
        return nil
    }
}
