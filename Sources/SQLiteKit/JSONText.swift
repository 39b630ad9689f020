import Foundation

/// JSON text for SQLite's JSON functions (https://sqlite.org/json1.html):
/// a list stored in one column (a roster entry's groups), or bound as one
/// parameter and read back with `json_each`.
public enum JSONText {
    /// `strings` as a JSON array, slashes left unescaped.
    ///
    /// - Throws: `EncodingError`, which strings never cause.
    public static func array(_ strings: [String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: try encoder.encode(strings), as: UTF8.self)
    }
}
