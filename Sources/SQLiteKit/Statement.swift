import CSQLite

/// A prepared SQL statement of a `Database`.
///
/// Bind parameters (numbered from 1, as in SQL), `step()` through the rows,
/// read columns (numbered from 0, as in SQLite's C API), then `reset()` to run
/// it again. Like its database, a statement belongs to one thread at a time;
/// it is finalized when released.
///
/// After a read, reset the statement (or use `Database.withCachedStatement`,
/// which does): a statement left half-stepped keeps its read transaction
/// open, which stops WAL checkpoints and pins this connection to an old
/// snapshot.
public final class Statement {
    /// The SQL text, with `?` placeholders.
    public let sql: String
    /// The `sqlite3_stmt`.
    let handle: OpaquePointer
    /// Set while a `Database.withCachedStatement` body uses this cached statement.
    var isInUse = false

    /// Compiles one SQL statement.
    ///
    /// - Throws: `DatabaseError` for invalid SQL, or with `.misuse` when
    ///   `sql` holds no statement or more than one.
    ///
    /// The corresponding C function is `sqlite3_prepare_v2`.
    init(connection: OpaquePointer, sql: String) throws {
        var handle: OpaquePointer?
        var trailing = ""
        let code = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(connection, text, -1, &handle, &tail)
            if let tail { trailing = String(cString: tail) }
            return code
        }
        guard code == SQLITE_OK else {
            throw DatabaseError(code: code, connection: connection, sql: sql)
        }
        guard let handle else {
            throw DatabaseError(resultCode: .misuse, message: "no SQL statement", sql: sql)
        }
        guard trailing.allSatisfy(\.isWhitespace) else {
            sqlite3_finalize(handle)
            throw DatabaseError(
                resultCode: .misuse,
                message: "more than one SQL statement; use Database.execute", sql: sql)
        }
        self.sql = sql
        self.handle = handle
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The connection this statement belongs to, for error messages.
    private var connection: OpaquePointer? { sqlite3_db_handle(handle) }

    // MARK: Binding

    /// Binds `value` to the parameter at `index`, counted from 1; `nil` binds `NULL`.
    ///
    /// SQLite copies the value before this returns.
    ///
    /// - Throws: `DatabaseError` with `.range` for an index the SQL does not
    ///   have, or `.tooBig` for a value over SQLite's length limit.
    ///
    /// The corresponding C functions are `sqlite3_bind_int64`,
    /// `sqlite3_bind_text64`, `sqlite3_bind_blob64`, `sqlite3_bind_zeroblob`
    /// and `sqlite3_bind_null`.
    public func bind(_ value: (any DatabaseValueConvertible)?, at index: Int) throws {
        let position = Int32(index)
        let code: Int32
        switch value?.databaseValue ?? .null {
        case .null:
            code = sqlite3_bind_null(handle, position)
        case .integer(let integer):
            code = sqlite3_bind_int64(handle, position, integer)
        case .text(let text):
            code = bindText(text, at: position)
        case .blob(let bytes) where bytes.isEmpty:
            // Likewise, an empty blob must not go through a null pointer.
            code = sqlite3_bind_zeroblob(handle, position, 0)
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob64(
                    handle, position, buffer.baseAddress, UInt64(buffer.count),
                    swiftlet_sqlite_transient())
            }
        }
        guard code == SQLITE_OK else {
            throw DatabaseError(code: code, connection: connection, sql: sql)
        }
    }

    /// Binds an integer to the parameter at `index`, counted from 1: the
    /// same as `bind(_:at:)`, without going through `DatabaseValue`, for
    /// statements run many times in a row (an archive batch).
    ///
    /// - Throws: `DatabaseError`, as `bind(_:at:)`.
    ///
    /// The corresponding C function is `sqlite3_bind_int64`.
    public func bind(integer: Int64, at index: Int) throws {
        let code = sqlite3_bind_int64(handle, Int32(index), integer)
        guard code == SQLITE_OK else {
            throw DatabaseError(code: code, connection: connection, sql: sql)
        }
    }

    /// Binds text, or `NULL` for `nil`, to the parameter at `index`,
    /// counted from 1: the same as `bind(_:at:)`, without going through
    /// `DatabaseValue`.
    ///
    /// - Throws: `DatabaseError`, as `bind(_:at:)`.
    ///
    /// The corresponding C functions are `sqlite3_bind_text64` and
    /// `sqlite3_bind_null`.
    public func bind(text: String?, at index: Int) throws {
        let code = text.map { bindText($0, at: Int32(index)) } ?? sqlite3_bind_null(handle, Int32(index))
        guard code == SQLITE_OK else {
            throw DatabaseError(code: code, connection: connection, sql: sql)
        }
    }

    /// Binds `text`, which SQLite copies; returns SQLite's result code.
    private func bindText(_ text: String, at position: Int32) -> Int32 {
        // A null pointer would bind NULL, so the empty string gets a real one.
        guard !text.isEmpty else { return sqlite3_bind_text(handle, position, "", 0, swiftlet_sqlite_transient()) }
        var text = text
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                sqlite3_bind_text64(
                    handle, position, chars.baseAddress, UInt64(chars.count),
                    swiftlet_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Binds `values` to the parameters 1, 2, … in order.
    ///
    /// - Precondition: There is one value per parameter of the SQL.
    /// - Throws: `DatabaseError`, as `bind(_:at:)`.
    ///
    /// The corresponding C function is `sqlite3_bind_parameter_count`.
    public func bind(_ values: (any DatabaseValueConvertible)?...) throws {
        precondition(
            values.count == Int(sqlite3_bind_parameter_count(handle)),
            "wrong number of values bound to SQL statement")
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    /// Sets every parameter back to `NULL`, which also frees SQLite's copies
    /// of the values bound before (keys, message bodies).
    ///
    /// The corresponding C function is `sqlite3_clear_bindings`.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    // MARK: Running

    /// Runs the statement to its next row.
    ///
    /// - Returns: `true` when a row is ready to read, `false` when the
    ///   statement has finished.
    /// - Throws: `DatabaseError`, for example `.busy` when another connection
    ///   kept its lock past the busy timeout, or `.constraint`.
    ///
    /// The corresponding C function is `sqlite3_step`.
    public func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw DatabaseError(code: code, connection: connection, sql: sql)
        }
    }

    /// Steps until the statement has finished, ignoring any rows; for
    /// `INSERT`, `UPDATE` and `DELETE`.
    ///
    /// - Throws: `DatabaseError`, as `step()`.
    public func run() throws {
        while try step() {}
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    ///
    /// The result of `sqlite3_reset` only repeats the error of the last step,
    /// which `step()` has already thrown, so it is not checked.
    ///
    /// The corresponding C function is `sqlite3_reset`.
    public func reset() {
        sqlite3_reset(handle)
    }

    // MARK: Reading the current row

    /// The number of columns in a row.
    ///
    /// The corresponding C function is `sqlite3_column_count`.
    public var columnCount: Int {
        Int(sqlite3_column_count(handle))
    }

    /// The column at `index` (from 0) as an integer; `NULL` reads as 0.
    ///
    /// The corresponding C function is `sqlite3_column_int64`.
    public func int64(at index: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(index))
    }

    /// The column at `index` (from 0) as an `Int`; `NULL` reads as 0.
    ///
    /// The corresponding C function is `sqlite3_column_int64`.
    public func int(at index: Int) -> Int {
        Int(int64(at: index))
    }

    /// The column at `index` (from 0) as text, or `nil` for `NULL`.
    ///
    /// The corresponding C functions are `sqlite3_column_text` and
    /// `sqlite3_column_bytes`.
    public func string(at index: Int) -> String? {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return nil }
        // Text first, then its length: SQLite's documented calling order.
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column at `index` (from 0) as bytes, or `nil` for `NULL`.
    ///
    /// The corresponding C functions are `sqlite3_column_blob` and
    /// `sqlite3_column_bytes`.
    public func blob(at index: Int) -> [UInt8]? {
        let column = Int32(index)
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return nil }
        // SQLite returns a null pointer for an empty blob.
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
