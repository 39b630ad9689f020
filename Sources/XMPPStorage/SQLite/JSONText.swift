import Foundation

/// JSON text for SQLite's JSON functions (https://sqlite.org/json1.html):
/// roster groups kept as an array, and lists of values bound as one
/// parameter and read back with `json_each`.
enum JSONText {
    /// `strings` as a JSON array, slashes left unescaped.
    static func array(_ strings: [String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: try encoder.encode(strings), as: UTF8.self)
    }
}
