import CSQLite

/// An SQLite result code (https://sqlite.org/rescode.html), primary or extended.
///
/// The set is open: any code SQLite returns can be represented, including
/// ones added after this file was written. Match with `~=`, in a `switch` or
/// a `catch`: a primary code matches itself and all of its extended codes, an
/// extended code only itself.
///
/// ```swift
/// switch error.resultCode {
/// case .constraintUnique: ...   // exactly SQLITE_CONSTRAINT_UNIQUE
/// case .constraint: ...         // any other constraint violation
/// default: ...
/// }
/// ```
public struct ResultCode: RawRepresentable, Hashable, Sendable {
    /// The integer SQLite returned.
    public let rawValue: Int32

    /// Wraps an integer result code.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The primary code: the low eight bits of an extended code.
    public var primaryResultCode: ResultCode {
        ResultCode(rawValue: rawValue & 0xFF)
    }

    /// Whether this is a primary code rather than an extended one.
    public var isPrimary: Bool {
        self == primaryResultCode
    }

    /// Matches `code` against `pattern`: equal primary codes if `pattern` is
    /// primary, the exact code otherwise.
    public static func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
        pattern.isPrimary ? pattern == code.primaryResultCode : pattern == code
    }

    /// Matches any error against `pattern`: true for a `DatabaseError` whose
    /// code matches, so that `catch ResultCode.busy { }` works.
    public static func ~= (pattern: ResultCode, error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return pattern ~= error.resultCode
    }
}

extension ResultCode {
    /// `SQLITE_OK`: success.
    public static let ok = ResultCode(rawValue: SQLITE_OK)
    /// `SQLITE_ERROR`: a generic error, such as an SQL syntax error.
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// `SQLITE_INTERNAL`: a bug inside SQLite.
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    /// `SQLITE_PERM`: the requested access mode cannot be provided.
    public static let permission = ResultCode(rawValue: SQLITE_PERM)
    /// `SQLITE_ABORT`: an operation was aborted, for example by a rollback.
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    /// `SQLITE_BUSY`: another connection held a lock for longer than the busy timeout.
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// `SQLITE_LOCKED`: a conflict inside this same connection.
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// `SQLITE_NOMEM`: SQLite could not allocate memory.
    public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
    /// `SQLITE_READONLY`: the database cannot be written.
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    /// `SQLITE_INTERRUPT`: `sqlite3_interrupt` stopped the operation.
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// `SQLITE_CORRUPT`: the database file is damaged.
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// `SQLITE_FULL`: the disk is full.
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// `SQLITE_CANTOPEN`: the file could not be opened.
    public static let cannotOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// `SQLITE_SCHEMA`: the schema changed; SQLite normally retries by itself.
    public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
    /// `SQLITE_TOOBIG`: a string or blob exceeds SQLite's size limit.
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    /// `SQLITE_CONSTRAINT`: a constraint was violated.
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// `SQLITE_MISMATCH`: a datatype mismatch.
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    /// `SQLITE_MISUSE`: the SQLite interface was used incorrectly.
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    /// `SQLITE_RANGE`: a parameter index is out of range.
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    /// `SQLITE_NOTADB`: the file is not an SQLite database.
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    /// `SQLITE_ROW`: `sqlite3_step` has another row ready.
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    /// `SQLITE_DONE`: `sqlite3_step` has finished.
    public static let done = ResultCode(rawValue: SQLITE_DONE)

    /// `SQLITE_CONSTRAINT_CHECK`: a `CHECK` constraint failed.
    public static let constraintCheck = ResultCode(
        rawValue: Int32(swiftlet_SQLITE_CONSTRAINT_CHECK))
    /// `SQLITE_CONSTRAINT_FOREIGNKEY`: a foreign key constraint failed.
    public static let constraintForeignKey = ResultCode(
        rawValue: Int32(swiftlet_SQLITE_CONSTRAINT_FOREIGNKEY))
    /// `SQLITE_CONSTRAINT_NOTNULL`: a `NOT NULL` constraint failed.
    public static let constraintNotNull = ResultCode(
        rawValue: Int32(swiftlet_SQLITE_CONSTRAINT_NOTNULL))
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`: a `PRIMARY KEY` constraint failed.
    public static let constraintPrimaryKey = ResultCode(
        rawValue: Int32(swiftlet_SQLITE_CONSTRAINT_PRIMARYKEY))
    /// `SQLITE_CONSTRAINT_UNIQUE`: a `UNIQUE` constraint failed.
    public static let constraintUnique = ResultCode(
        rawValue: Int32(swiftlet_SQLITE_CONSTRAINT_UNIQUE))
}

extension ResultCode: CustomStringConvertible {
    /// The number and SQLite's English explanation, such as `5 (database is locked)`.
    ///
    /// The corresponding C function is `sqlite3_errstr`.
    public var description: String {
        "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))"
    }
}

/// An error reported by SQLite.
///
/// It carries the result code, SQLite's message and the SQL text as written
/// in our source, with `?` placeholders. It never carries bound values:
/// those are passwords, keys and message bodies, and errors end up in logs.
/// For the same reason, never interpolate such values into SQL text; bind them.
public struct DatabaseError: Error, Sendable, Hashable {
    /// The extended result code.
    public let resultCode: ResultCode
    /// SQLite's message, such as `UNIQUE constraint failed: accounts.username`.
    public let message: String
    /// The statement that failed, if the error came from one.
    public let sql: String?

    /// Creates an error; the stores use it to report damaged records.
    public init(resultCode: ResultCode, message: String, sql: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    /// Reads the message of the most recent failure on `connection`.
    ///
    /// The corresponding C function is `sqlite3_errmsg`.
    init(code: Int32, connection: OpaquePointer?, sql: String?) {
        let message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        self.init(
            resultCode: ResultCode(rawValue: code),
            message: message ?? String(cString: sqlite3_errstr(code)), sql: sql)
    }
}

extension DatabaseError: CustomStringConvertible {
    /// The code, the message and the SQL, for logs.
    public var description: String {
        var text = "SQLite error \(resultCode): \(message)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }
}
