/// The head of an HTTP/1.x request (RFC 9112 §2.1): request line and
/// header fields, the body not included.
package struct HTTPRequestHead: Sendable, Equatable {
    /// The method, case-sensitive as RFC 9110 §9.1 says: `GET`, `PUT`.
    package var method: String
    /// The request target as sent, in origin form (`/upload/a/b?v=1`) or
    /// `*` (RFC 9112 §3.2).
    package var target: String
    /// The minor version of HTTP/1.x: 0 or 1.
    package var minorVersion: Int
    /// The header fields in order; names as sent, values without the
    /// surrounding whitespace.
    package var fields: [(name: String, value: String)]

    /// The value of the field `name` (case-insensitive), if it occurs
    /// exactly once; nil when it is absent or repeated.
    subscript(field name: String) -> String? {
        let values = values(of: name)
        return values.count == 1 ? values[0] : nil
    }

    /// Every value of the field `name`, in order (case-insensitive).
    package func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The path of the target, without the query.
    var path: Substring { target.prefix { $0 != "?" } }

    /// The query of the target, after `?`; nil without one.
    var query: Substring? {
        target.firstIndex(of: "?").map { target[target.index(after: $0)...] }
    }

    package static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.minorVersion == rhs.minorVersion
            && lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// Reads the head of one HTTP/1.x request from bytes that arrive in pieces
/// of any size, strictly and within fixed bounds: a pure value with no I/O,
/// tested by feeding the same request split at every offset.
///
/// What it refuses, with the status to answer:
/// - a request line over `maxRequestLineLength` bytes: 414;
/// - more than `maxFieldCount` fields, or a field block over
///   `maxFieldBlockLength` bytes: 431;
/// - anything malformed (RFC 9112 §2.2, §3, §5): a line ending in a bare
///   CR or a bare LF, a method or field name that is not a token, space
///   before a field's colon, an obsolete line folding, control characters
///   in a value, a target that is neither origin form nor `*`, an HTTP/1.1
///   request without exactly one `Host`: 400;
/// - a protocol other than HTTP/1.0 or HTTP/1.1: 505.
///
/// Framing (`Content-Length`, `Transfer-Encoding`) is the caller's: the
/// parser only returns where the head ended.
package struct HTTPRequestParser {
    /// The bounds. The defaults: 8 KiB request line, 64 fields, 16 KiB of fields.
    package struct Limits: Sendable {
        package var maxRequestLineLength: Int
        package var maxFieldCount: Int
        package var maxFieldBlockLength: Int

        package init(maxRequestLineLength: Int = 8 << 10, maxFieldCount: Int = 64, maxFieldBlockLength: Int = 16 << 10) {
            self.maxRequestLineLength = maxRequestLineLength
            self.maxFieldCount = maxFieldCount
            self.maxFieldBlockLength = maxFieldBlockLength
        }
    }

    /// What a `feed` call found.
    package enum Outcome: Equatable {
        /// The head is not complete yet.
        case needMore
        /// The head is complete; the bytes of the last fed chunk from
        /// `bodyStart` on follow it (the body, or the next request).
        case complete(HTTPRequestHead, bodyStart: Int)
        /// The request cannot be served; answer with `status` and close.
        case failed(HTTPStatus, String)
    }

    package let limits: Limits
    /// The head so far (empty lines before the request line are dropped).
    private var buffer: [UInt8] = []
    /// Where the request line ends in `buffer` (its CR), once seen.
    private var requestLineEnd: Int?
    /// Where to resume looking for the end of the head.
    private var scanned = 0
    /// Set once the parser has returned `.complete` or `.failed`.
    private var isDone = false
    /// Empty lines dropped before the request line.
    private var skippedEmptyLines = 0

    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Takes the next bytes of the connection.
    /// - Precondition: No earlier call returned `.complete` or `.failed`.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        precondition(!isDone, "HTTPRequestParser fed after the end of the head")
        for (index, byte) in bytes.enumerated() {
            buffer.append(byte)
            guard let outcome = examine(byte) else { continue }
            isDone = true
            if case .complete(let head, _) = outcome { return .complete(head, bodyStart: index + 1) }
            return outcome
        }
        return .needMore
    }

    /// Checks the byte just appended; an outcome once the head ends or fails.
    private mutating func examine(_ byte: UInt8) -> Outcome? {
        let count = buffer.count
        if count >= 2, buffer[count - 2] == cr, byte != lf {
            return .failed(.badRequest, "a CR not followed by LF")
        }
        if byte == lf, count < 2 || buffer[count - 2] != cr {
            return .failed(.badRequest, "a line ends in LF without CR")
        }
        guard let lineEnd = requestLineEnd else {
            if byte == lf {
                guard count == 2 else {
                    requestLineEnd = count - 2
                    return nil
                }
                // RFC 9112 §2.2: a server SHOULD ignore at least one empty
                // line before the request line. A few, not endlessly.
                skippedEmptyLines += 1
                buffer.removeAll(keepingCapacity: true)
                return skippedEmptyLines > 4 ? .failed(.badRequest, "empty lines instead of a request") : nil
            }
            if count > limits.maxRequestLineLength {
                return .failed(.uriTooLong, "the request line is longer than \(limits.maxRequestLineLength) bytes")
            }
            return nil
        }
        if count - (lineEnd + 2) > limits.maxFieldBlockLength {
            return .failed(
                .requestHeaderFieldsTooLarge, "the header fields exceed \(limits.maxFieldBlockLength) bytes")
        }
        // The head ends with an empty line: CRLF CRLF, the first CRLF being
        // the request line's own or a field's.
        guard byte == lf, count >= lineEnd + 4, buffer[count - 4] == cr, buffer[count - 3] == lf else { return nil }
        return parseHead(requestLineEnd: lineEnd)
    }

    /// Parses the complete head in `buffer`.
    private func parseHead(requestLineEnd lineEnd: Int) -> Outcome {
        let requestLine = buffer[..<lineEnd]
        let parts = requestLine.split(separator: sp, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failed(.badRequest, "the request line is not 'METHOD target HTTP/1.1'") }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else {
            return .failed(.badRequest, "the method is not a token")
        }
        guard let minorVersion = Self.minorVersion(version) else {
            guard version.starts(with: Array("HTTP/".utf8)) else {
                return .failed(.badRequest, "no HTTP version on the request line")
            }
            return .failed(.httpVersionNotSupported, "only HTTP/1.0 and HTTP/1.1 are served")
        }
        guard target == Array("*".utf8)[...] || target.first == UInt8(ascii: "/"),
            target.allSatisfy({ $0 > sp && $0 < del })
        else {
            return .failed(.badRequest, "the target is neither an absolute path nor '*'")
        }
        var fields: [(name: String, value: String)] = []
        var lineStart = lineEnd + 2
        while lineStart < buffer.count - 2 {
            var lineStop = lineStart
            while buffer[lineStop] != cr { lineStop += 1 }
            let line = buffer[lineStart..<lineStop]
            lineStart = lineStop + 2
            if fields.count == limits.maxFieldCount {
                return .failed(.requestHeaderFieldsTooLarge, "more than \(limits.maxFieldCount) header fields")
            }
            switch Self.field(line) {
            case .success(let field): fields.append(field)
            case .failure(let reason): return .failed(.badRequest, reason.message)
            }
        }
        let head = HTTPRequestHead(
            method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self),
            minorVersion: minorVersion, fields: fields)
        // RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request
        // that lacks a Host field or has more than one.
        if minorVersion == 1, head.values(of: "host").count != 1 {
            return .failed(.badRequest, "an HTTP/1.1 request needs exactly one Host field")
        }
        return .complete(head, bodyStart: 0)
    }

    private struct FieldError: Error {
        let message: String
    }

    /// One `name: value` line (RFC 9112 §5).
    private static func field(_ line: ArraySlice<UInt8>) -> Result<(name: String, value: String), FieldError> {
        if let first = line.first, first == sp || first == tab {
            return .failure(FieldError(message: "obsolete line folding is not accepted"))
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            return .failure(FieldError(message: "a header line without ':'"))
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            // Includes whitespace before the colon, which RFC 9112 §5.1
            // says MUST be answered with 400.
            return .failure(FieldError(message: "a header name is not a token"))
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == sp || first == tab { value = value.dropFirst() }
        while let last = value.last, last == sp || last == tab { value = value.dropLast() }
        guard value.allSatisfy({ $0 == tab || ($0 >= sp && $0 != del) }) else {
            return .failure(FieldError(message: "a control character in a header value"))
        }
        guard let text = String(validating: value, as: UTF8.self) else {
            return .failure(FieldError(message: "a header value is not UTF-8"))
        }
        return .success((String(decoding: name, as: UTF8.self), text))
    }

    /// 0 for `HTTP/1.0`, 1 for `HTTP/1.1`, nil otherwise.
    private static func minorVersion(_ version: ArraySlice<UInt8>) -> Int? {
        switch String(decoding: version, as: UTF8.self) {
        case "HTTP/1.1": 1
        case "HTTP/1.0": 0
        default: nil
        }
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let sp = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let del: UInt8 = 0x7F

/// Whether `byte` may appear in a token (RFC 9110 §5.6.2: `tchar`).
package func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
}
