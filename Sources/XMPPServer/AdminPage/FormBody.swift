import Foundation
import XMPPCore

/// The fields of an `application/x-www-form-urlencoded` body, as the
/// WHATWG URL standard §5.1 parses them: `&`-separated `name=value` pairs,
/// `+` for a space, `%XX` for a byte, and a `%` not followed by two hex
/// digits kept as it is. Stricter than the standard in one point: bytes
/// that are not UTF-8 make the whole body invalid instead of turning into
/// U+FFFD, so that a name never silently changes on its way to an account.
struct FormFields: Equatable {
    /// The pairs in order; a name may repeat.
    private(set) var pairs: [Pair]

    struct Pair: Equatable {
        var name: String
        var value: String
    }

    /// Parses `body`; nil when a name or value is not UTF-8.
    init?(decoding body: some Collection<UInt8>) {
        pairs = []
        for sequence in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = sequence.firstIndex(of: UInt8(ascii: "="))
            let name = Self.percentDecoded(sequence[..<(equals ?? sequence.endIndex)])
            let value = equals.map { Self.percentDecoded(sequence[sequence.index(after: $0)...]) } ?? []
            guard let name = String(validating: name, as: UTF8.self),
                let value = String(validating: value, as: UTF8.self)
            else { return nil }
            pairs.append(Pair(name: name, value: value))
        }
    }

    /// The first value of `name`, or nil.
    subscript(name: String) -> String? {
        pairs.first { $0.name == name }?.value
    }

    /// `bytes` with `+` as a space and each `%XX` as its byte (WHATWG URL
    /// §1.3 "percent-decode", after §5.1 step 3.3's `+` replacement).
    private static func percentDecoded(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let bytes = Array(bytes)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = Hex.digitValue(bytes[index + 1]), let low = Hex.digitValue(bytes[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
                continue
            }
            decoded.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return decoded
    }
}

/// Collects a small form body in memory and hands its fields on once it
/// is complete. The connection streams a body in reads of any size; the
/// length is checked against `limit` before any byte is read
/// (`receive(_:on:then:)`), so the buffer never grows past it.
final class FormBodySink: HTTPBodySink {
    /// The largest form accepted: a login or an account form is far
    /// smaller. Beyond it: `413`.
    static let limit = 16 << 10

    private var body: [UInt8] = []
    private let handle: (FormFields, _ respond: @escaping (HTTPResponse) -> Void) -> Void

    private init(_ handle: @escaping (FormFields, _ respond: @escaping (HTTPResponse) -> Void) -> Void) {
        self.handle = handle
    }

    /// Reads the body of `request` as a form and passes its fields to
    /// `handle`, which answers through `respond`. Answers itself, without
    /// reading the body, when it is not a form (`400`), has no
    /// `Content-Length` (`411`) or is longer than `limit` (`413`); and
    /// `400` when the body is not UTF-8.
    static func receive(
        _ request: HTTPRequestHead, on connection: HTTPConnection,
        then handle: @escaping (FormFields, _ respond: @escaping (HTTPResponse) -> Void) -> Void
    ) {
        let type = request[field: "content-type"]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
            .lowercased()
        guard type == "application/x-www-form-urlencoded" else {
            return connection.respond(.text(.badRequest, "expected a form (application/x-www-form-urlencoded)"))
        }
        guard let length = request.contentLength else {
            return connection.respond(.text(.lengthRequired, "a form needs Content-Length"))
        }
        guard length <= limit else {
            return connection.respond(.text(.contentTooLarge, "a form may have at most \(limit) bytes"))
        }
        connection.receiveBody(into: FormBodySink(handle))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(body.count + bytes.count <= Self.limit, "a form body past the length checked")
        body += bytes
    }

    func finish(_ completion: @escaping (HTTPResponse) -> Void) {
        guard let fields = FormFields(decoding: body) else {
            return completion(.text(.badRequest, "the form is not UTF-8"))
        }
        body = []
        handle(fields, completion)
    }

    func abort() {
        body = []
    }
}
