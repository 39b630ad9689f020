#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The HTTP status codes the server sends (RFC 9110 §15); the raw value is
/// the code.
package enum HTTPStatus: Int, Sendable, CaseIterable {
    case `continue` = 100
    case switchingProtocols = 101
    case ok = 200
    case created = 201
    case noContent = 204
    case notModified = 304
    case badRequest = 400
    case unauthorized = 401
    case forbidden = 403
    case notFound = 404
    case methodNotAllowed = 405
    case requestTimeout = 408
    case conflict = 409
    case lengthRequired = 411
    case contentTooLarge = 413
    case uriTooLong = 414
    case expectationFailed = 417
    case upgradeRequired = 426
    case requestHeaderFieldsTooLarge = 431
    case internalServerError = 500
    case notImplemented = 501
    case serviceUnavailable = 503
    case httpVersionNotSupported = 505

    /// The reason phrase RFC 9110 §15 (and RFC 6585 §5 for 431) gives.
    var reasonPhrase: String {
        switch self {
        case .continue: "Continue"
        case .switchingProtocols: "Switching Protocols"
        case .ok: "OK"
        case .created: "Created"
        case .noContent: "No Content"
        case .notModified: "Not Modified"
        case .badRequest: "Bad Request"
        case .unauthorized: "Unauthorized"
        case .forbidden: "Forbidden"
        case .notFound: "Not Found"
        case .methodNotAllowed: "Method Not Allowed"
        case .requestTimeout: "Request Timeout"
        case .conflict: "Conflict"
        case .lengthRequired: "Length Required"
        case .contentTooLarge: "Content Too Large"
        case .uriTooLong: "URI Too Long"
        case .expectationFailed: "Expectation Failed"
        case .upgradeRequired: "Upgrade Required"
        case .requestHeaderFieldsTooLarge: "Request Header Fields Too Large"
        case .internalServerError: "Internal Server Error"
        case .notImplemented: "Not Implemented"
        case .serviceUnavailable: "Service Unavailable"
        case .httpVersionNotSupported: "HTTP Version Not Supported"
        }
    }
}

/// A response's status line and header fields, and a body small enough to
/// hold in memory (error texts; a file goes through
/// `HTTPConnection.sendFile`).
///
/// The connection adds `Date`, `Connection: close` and, unless a field
/// says otherwise, `Content-Length` of `body` (neither to `100` and `101`,
/// after which the connection goes on).
struct HTTPResponse: Sendable {
    var status: HTTPStatus
    /// Header fields in order; names as they are written.
    var fields: [(name: String, value: String)] = []
    var body: [UInt8] = []

    init(_ status: HTTPStatus, fields: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.fields = fields
        self.body = body
    }

    /// A plain-text response, for errors: `text` and a newline.
    static func text(_ status: HTTPStatus, _ text: String, fields: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(
            status,
            fields: fields + [
                ("Content-Type", "text/plain; charset=utf-8"), ("X-Content-Type-Options", "nosniff"),
            ],
            body: Array((text + "\n").utf8))
    }

    /// The status line and fields as bytes, ending with the empty line.
    ///
    /// - Parameter date: The `Date` field's time, in seconds since 1970.
    func head(date: Int) -> [UInt8] {
        var text = "HTTP/1.1 \(status.rawValue) \(status.reasonPhrase)\r\n"
        text += "Date: \(httpDate(date))\r\n"
        var hasLength = false
        for (name, value) in fields {
            precondition(
                !value.utf8.contains(where: { $0 == 13 || $0 == 10 }), "a header value with a line break: \(name)")
            hasLength = hasLength || name.lowercased() == "content-length"
            text += "\(name): \(value)\r\n"
        }
        let goesOn = status == .continue || status == .switchingProtocols
        if !hasLength && !goesOn && status != .noContent && status != .notModified {
            text += "Content-Length: \(body.count)\r\n"
        }
        if !goesOn { text += "Connection: close\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`: the IMF-fixdate of RFC 9110 §5.6.7,
/// for `seconds` since 1970, written without the C library's locale.
///
/// The corresponding C function is `gmtime_r`.
func httpDate(_ seconds: Int) -> String {
    var time = time_t(seconds)
    var parts = tm()
    gmtime_r(&time, &parts)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
        + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
}
