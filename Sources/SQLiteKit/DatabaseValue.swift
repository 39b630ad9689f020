/// A value SQLite stores: one of its storage classes (https://sqlite.org/datatype3.html).
///
/// Floating point is left out until a store needs it.
public enum DatabaseValue: Sendable, Hashable {
    /// `NULL`.
    case null
    /// A signed 64-bit `INTEGER`.
    case integer(Int64)
    /// `TEXT`, stored as UTF-8.
    case text(String)
    /// A `BLOB`: bytes SQLite does not interpret.
    case blob([UInt8])
}

/// A Swift value that can be bound to a statement parameter.
public protocol DatabaseValueConvertible {
    /// The value to bind.
    var databaseValue: DatabaseValue { get }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }
}

extension Int: DatabaseValueConvertible {
    /// An `INTEGER`.
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Int64: DatabaseValueConvertible {
    /// An `INTEGER`.
    public var databaseValue: DatabaseValue { .integer(self) }
}

extension String: DatabaseValueConvertible {
    /// `TEXT`.
    public var databaseValue: DatabaseValue { .text(self) }
}

extension Array: DatabaseValueConvertible where Element == UInt8 {
    /// A `BLOB`; an empty array is an empty blob, not `NULL`.
    public var databaseValue: DatabaseValue { .blob(self) }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// The wrapped value, or `NULL` for `nil`.
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
}
