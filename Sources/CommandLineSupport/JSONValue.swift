import Foundation

/// A JSON value, for the one-object-per-line output of `--json`.
public enum JSONValue: Sendable, Hashable, Encodable {
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The value on one line, keys sorted so that the output is stable.
    /// Newlines in strings are escaped, so the text never spans lines.
    public var line: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings, numbers and containers of them cannot fail.
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    /// An object of the fields whose value is not `nil`.
    static func fields(_ fields: [String: JSONValue?]) -> JSONValue {
        .object(fields.compactMapValues { $0 })
    }
}
