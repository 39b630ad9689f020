import CSQLite

/// One SQLite connection.
///
/// Not `Sendable`: a connection and its statements are used by one thread at
/// a time. The server and the client kit each confine their connection to a
/// storage thread (`StorageQueue`); an admin command opens a second
/// connection of its own, which WAL mode and the busy timeout let run beside
/// the server.
public final class Database {
    /// The SQLite this process runs (`SQLite 3.40.1`), for `--version`.
    public static var libraryDescription: String { "SQLite " + String(cString: sqlite3_libversion()) }

    /// How a connection is set up when it opens.
    public struct Configuration: Sendable {
        /// How long a statement waits for another connection's lock before
        /// failing with `ResultCode.busy`. Default: 5 seconds, so that an
        /// admin command can write while the server runs.
        public var busyTimeout: Duration
        /// When SQLite waits for the disk. Default: `.full`.
        public var synchronous: Synchronous
        /// The most memory the connection keeps for database pages, in
        /// KiB (`PRAGMA cache_size = -N`). Default: 16384 (16 MiB), where
        /// SQLite's is 2 MiB. Every archived message adds a row to each
        /// archive that keeps it, at a leaf page of its own for each active
        /// user; with a few hundred users chatting those leaves outgrow
        /// 2 MiB, and each is then read again (from the file, or the
        /// system's file cache) for every batch. Memory is taken only as
        /// pages are used.
        public var cacheKiB: Int
        /// How many pages the WAL file may hold before they are copied into
        /// the database file, which is then synced (`PRAGMA
        /// wal_autocheckpoint`, or the `WALCheckpointer`).
        /// Default: 4000 (16 MiB with 4 KiB pages), where SQLite's is 1000.
        /// A page written again and again (an index leaf, under a stream
        /// of messages) is copied once per checkpoint, so fewer, larger
        /// checkpoints write less; the WAL file keeps its largest size.
        public var walAutocheckpointPages: Int
        /// Whether those checkpoints run on a thread of their own (see
        /// `WALCheckpointer`) rather than inside the commit that fills the
        /// WAL. Default: true. Ignored in memory.
        public var checkpointsInBackground: Bool

        /// Creates a configuration; the defaults suit the server.
        public init(
            busyTimeout: Duration = .seconds(5), synchronous: Synchronous = .full, cacheKiB: Int = 16384,
            walAutocheckpointPages: Int = 4000, checkpointsInBackground: Bool = true
        ) {
            self.busyTimeout = busyTimeout
            self.synchronous = synchronous
            self.cacheKiB = cacheKiB
            self.walAutocheckpointPages = walAutocheckpointPages
            self.checkpointsInBackground = checkpointsInBackground
        }
    }

    /// The values of `PRAGMA synchronous` (https://sqlite.org/pragma.html#pragma_synchronous).
    public enum Synchronous: String, Sendable, CaseIterable {
        /// Never waits for the disk: a crash of the OS or a power loss may corrupt the file.
        case off = "OFF"
        /// In WAL mode the database stays consistent, but SQLite's documentation
        /// warns: "A transaction committed in WAL mode with synchronous=NORMAL
        /// might roll back following a power loss or system crash."
        case normal = "NORMAL"
        /// In WAL mode, syncs the WAL file at every commit, so a committed
        /// transaction survives a power loss. The server acknowledges a
        /// message only once it is committed, so this is the default: an
        /// acknowledged message must never be lost.
        case full = "FULL"
        /// Like `.full`, and also syncs the directory after deleting a journal.
        case extra = "EXTRA"
    }

    /// The file name SQLite uses for a private in-memory database.
    static let inMemoryPath = ":memory:"

    /// The file this connection opened, or `":memory:"`.
    public let path: String
    /// The `synchronous` setting the connection was opened with.
    public let synchronous: Synchronous
    /// Whether `transaction(synchronous:_:)` could not put `synchronous`
    /// back; the next transaction tries again before it begins.
    private var synchronousNeedsRestoring = false
    /// The `sqlite3` handle; `nil` once closed.
    private var connection: OpaquePointer?
    /// Prepared statements kept for reuse, by SQL text.
    private var statementCache: [String: Statement] = [:]
    /// The thread that checkpoints the WAL, if it is not the commits.
    let checkpointer: WALCheckpointer?

    /// Opens (creating if needed) the database file at `path` and sets the
    /// connection up: WAL journal, busy timeout, foreign keys, `synchronous`.
    ///
    /// The directory must already exist. The database file and the files
    /// SQLite keeps beside it are made readable by their owner only (see
    /// `restrictFileModes(at:)`). The path `":memory:"` opens a private
    /// in-memory database, which has no WAL.
    ///
    /// - Throws: `DatabaseError`, for example `.cannotOpen`, `.permission`,
    ///   `.notADatabase`, or `.error` when the file system cannot do WAL
    ///   (as on network shares).
    ///
    /// The corresponding C function is `sqlite3_open_v2`.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        // Built with SQLITE_THREADSAFE=0, SQLite has no mutexes at all, and not
        // even two separate connections (the storage thread's and, in the same
        // process, a test's or an admin command's) may run on two threads.
        precondition(sqlite3_threadsafe() != 0, "SQLite was built without thread support")
        _ = Self.configureLibrary
        if path != Self.inMemoryPath { try Self.restrictFileModes(at: path) }
        var connection: OpaquePointer?
        // SQLITE_OPEN_NOMUTEX puts the connection in "multi-thread" mode: it
        // skips the per-connection mutex, which is safe because a connection is
        // only ever used by one thread at a time (see StorageQueue).
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        do {
            guard code == SQLITE_OK, let connection else {
                throw DatabaseError(code: code, connection: connection, sql: nil)
            }
            try Self.configure(connection, configuration, inMemory: path == Self.inMemoryPath)
        } catch {
            // A failed open still allocates a handle, which must be closed.
            sqlite3_close_v2(connection)
            throw error
        }
        self.path = path
        self.synchronous = configuration.synchronous
        self.connection = connection
        if configuration.checkpointsInBackground, path != Self.inMemoryPath, let connection {
            let checkpointer = WALCheckpointer(path: path, configuration: configuration)
            checkpointer.attach(to: connection)
            self.checkpointer = checkpointer
        } else {
            self.checkpointer = nil
        }
    }

    /// Opens a new, empty database that lives in memory and disappears when
    /// closed; for tests.
    ///
    /// - Throws: `DatabaseError`.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> Database {
        try Database(path: inMemoryPath, configuration: configuration)
    }

    deinit {
        close()
    }

    /// Process-wide settings, made once, before the first connection opens
    /// (Swift runs a static initializer once, and other threads that need
    /// it wait): memory statistics off (`SQLITE_CONFIG_MEMSTATUS`).
    ///
    /// With them on, which is SQLite's default, every allocation and free
    /// takes one mutex shared by all connections, to keep a count that
    /// nothing here reads: no code calls `sqlite3_memory_used`,
    /// `sqlite3_status` or the heap limits (which would need the count).
    /// If SQLite was initialized before (by other code in the process),
    /// `sqlite3_config` returns `SQLITE_MISUSE` and changes nothing: the
    /// statistics stay on, which is only slower.
    ///
    /// The corresponding C function is `sqlite3_config`.
    private static let configureLibrary: Void = {
        _ = swiftlet_sqlite_disable_memory_statistics()
    }()

    /// Sets up a freshly opened connection.
    ///
    /// The corresponding C functions are `sqlite3_extended_result_codes` and
    /// `sqlite3_busy_timeout`.
    private static func configure(
        _ connection: OpaquePointer, _ configuration: Configuration, inMemory: Bool
    ) throws {
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, milliseconds(configuration.busyTimeout))
        if !inMemory {
            // Readers and the writer do not block each other in WAL mode, and
            // a commit is one append to the WAL file.
            let statement = try Statement(connection: connection, sql: "PRAGMA journal_mode = WAL")
            let mode = try retryingWhileBusy(for: configuration.busyTimeout) {
                defer { statement.reset() }
                return try statement.step() ? statement.string(at: 0) : nil
            }
            guard mode?.lowercased() == "wal" else {
                throw DatabaseError(
                    resultCode: .error,
                    message: "could not switch to WAL journal mode (still \(mode ?? "unknown"))",
                    sql: statement.sql)
            }
        }
        // Off by default in SQLite, per connection: without it ON DELETE
        // CASCADE does nothing.
        try execute("PRAGMA foreign_keys = ON", on: connection)
        try execute("PRAGMA synchronous = \(configuration.synchronous.rawValue)", on: connection)
        try execute("PRAGMA cache_size = \(-max(configuration.cacheKiB, 1))", on: connection)
        if !inMemory {
            try execute("PRAGMA wal_autocheckpoint = \(max(configuration.walAutocheckpointPages, 1))", on: connection)
        }
    }

    /// Runs `body` again while it fails with `SQLITE_BUSY`, every 10 ms for
    /// at most `timeout`. For the switch to WAL, which SQLite answers with
    /// `SQLITE_BUSY` at once, without its busy handler, when two processes
    /// open a new file together (as concurrent admin commands do).
    private static func retryingWhileBusy<Result>(
        for timeout: Duration, _ body: () throws -> Result
    ) throws -> Result {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                return try body()
            } catch let error as DatabaseError where error.resultCode == .busy && ContinuousClock.now < deadline {
                sqlite3_sleep(10)
            }
        }
    }

    /// `duration` in whole milliseconds, clamped to what `sqlite3_busy_timeout` takes.
    private static func milliseconds(_ duration: Duration) -> Int32 {
        guard duration > .zero else { return 0 }
        guard duration < .milliseconds(Int32.max) else { return .max }
        let (seconds, attoseconds) = duration.components
        return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// The open handle.
    ///
    /// - Precondition: The database is not closed.
    private var handle: OpaquePointer {
        guard let connection else { preconditionFailure("use of a closed Database") }
        return connection
    }

    /// Closes the connection; closing twice does nothing.
    ///
    /// Statements from `prepare(_:)` that are still alive keep the connection
    /// open until they are released. The last connection to close checkpoints
    /// the WAL into the database file.
    ///
    /// The corresponding C function is `sqlite3_close_v2`.
    public func close() {
        guard let connection else { return }
        statementCache.removeAll()
        sqlite3_close_v2(connection)
        self.connection = nil
        // After the writer: the checkpointer's connection, closing last,
        // checkpoints what is left and removes the WAL.
        checkpointer?.stop()
    }

    /// Copies as much of the WAL into the database file as it can without
    /// waiting for other connections (`SQLITE_CHECKPOINT_PASSIVE`).
    ///
    /// - Returns: How many WAL pages there are, and how many of them are now
    ///   in the database file; `nil` when the checkpoint failed (busy, or
    ///   not in WAL mode).
    ///
    /// The corresponding C function is `sqlite3_wal_checkpoint_v2`.
    @discardableResult
    func checkpointPassively() -> (pages: Int, copied: Int)? {
        var (pages, copied): (Int32, Int32) = (0, 0)
        guard sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &pages, &copied) == SQLITE_OK else {
            return nil
        }
        return (Int(pages), Int(copied))
    }

    // MARK: Running SQL

    /// Runs one or more SQL statements that take no parameters and return
    /// no rows the caller needs, such as `CREATE TABLE`.
    ///
    /// Never build `sql` from user data: bind values with a `Statement`.
    ///
    /// - Throws: `DatabaseError`.
    ///
    /// The corresponding C function is `sqlite3_exec`.
    public func execute(_ sql: String) throws {
        try Self.execute(sql, on: handle)
    }

    private static func execute(_ sql: String, on connection: OpaquePointer) throws {
        let code = sqlite3_exec(connection, sql, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw DatabaseError(code: code, connection: connection, sql: sql)
        }
    }

    /// Compiles one SQL statement for this connection.
    ///
    /// - Throws: `DatabaseError`; `.misuse` if `sql` is not exactly one statement.
    ///
    /// The corresponding C function is `sqlite3_prepare_v2`.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: handle, sql: sql)
    }

    /// Calls `body` with a prepared statement for `sql`, compiled once and
    /// kept for later calls with the same text.
    ///
    /// Afterwards the statement is reset and its bindings cleared, so no
    /// transaction stays open and no bound secret stays in memory. If the
    /// cached statement is already in use further up the stack, `body` gets
    /// a fresh one.
    ///
    /// - Throws: `DatabaseError`, or what `body` throws.
    public func withCachedStatement<Result>(
        _ sql: String, _ body: (Statement) throws -> Result
    ) throws -> Result {
        let statement: Statement
        if let cached = statementCache[sql] {
            statement = cached.isInUse ? try prepare(sql) : cached
        } else {
            statement = try prepare(sql)
            statementCache[sql] = statement
        }
        statement.isInUse = true
        defer {
            statement.reset()
            statement.clearBindings()
            statement.isInUse = false
        }
        return try body(statement)
    }

    /// Runs the cached statement `sql` once with `values` bound to its
    /// parameters in order, for an `INSERT`, `UPDATE` or `DELETE`.
    ///
    /// - Returns: How many rows it changed.
    /// - Throws: `DatabaseError`.
    @discardableResult
    public func run(_ sql: String, _ values: (any DatabaseValueConvertible)?...) throws -> Int {
        try withCachedStatement(sql) { statement in
            for (offset, value) in values.enumerated() { try statement.bind(value, at: offset + 1) }
            try statement.run()
        }
        return changes
    }

    /// The number of rows the last `INSERT`, `UPDATE` or `DELETE` changed.
    ///
    /// The corresponding C function is `sqlite3_changes`.
    public var changes: Int {
        Int(sqlite3_changes(handle))
    }

    /// The rowid of the last row inserted on this connection.
    ///
    /// The corresponding C function is `sqlite3_last_insert_rowid`.
    public var lastInsertedRowID: Int64 {
        sqlite3_last_insert_rowid(handle)
    }

    // MARK: Transactions

    /// Whether a transaction is open on this connection.
    ///
    /// The corresponding C function is `sqlite3_get_autocommit`.
    public var isInTransaction: Bool {
        sqlite3_get_autocommit(handle) == 0
    }

    /// Runs `body` in a transaction committed with `synchronous` set to
    /// `mode` instead of the connection's setting, which is restored after.
    ///
    /// For writes that may be lost in a power failure but must not wait for
    /// the disk: in WAL mode `.normal` commits without a sync, the database
    /// stays consistent, and the next `.full` commit syncs everything
    /// before it too. Inside a transaction, `body` joins it unchanged.
    ///
    /// Should putting the setting back fail, this transaction's outcome
    /// stands, and every later transaction tries again before it begins
    /// and throws while that fails: carrying on would commit acknowledged
    /// messages without a sync.
    ///
    /// - Throws: As `transaction(_:)`.
    public func transaction<Result>(synchronous mode: Synchronous, _ body: () throws -> Result) throws -> Result {
        guard !isInTransaction, mode != synchronous else { return try transaction(body) }
        try execute("PRAGMA synchronous = \(mode.rawValue)")
        defer {
            // Not thrown here: the commit stands; the next transaction throws.
            synchronousNeedsRestoring = true
            try? restoreSynchronousIfNeeded()
        }
        return try transaction(body)
    }

    /// Puts `synchronous` back if `transaction(synchronous:_:)` could not.
    ///
    /// - Throws: `DatabaseError`, and the restore stays pending.
    private func restoreSynchronousIfNeeded() throws {
        guard synchronousNeedsRestoring else { return }
        try execute("PRAGMA synchronous = \(synchronous.rawValue)")
        synchronousNeedsRestoring = false
    }

    /// Runs `body` in a transaction: commits if it returns, rolls back if it
    /// (or the commit) throws.
    ///
    /// The outermost call begins with `BEGIN IMMEDIATE`, which takes the write
    /// lock up front (waiting up to the busy timeout). A deferred transaction
    /// that reads first and then writes can fail with `SQLITE_BUSY` without
    /// the busy handler ever being asked, when another connection wrote in
    /// between. A call inside a transaction becomes a savepoint, so that
    /// stores can use transactions and a job can still group several store
    /// calls into one commit.
    ///
    /// - Throws: `DatabaseError` (for example `.busy`, or the failure to
    ///   restore `synchronous`: see `transaction(synchronous:_:)`), or what
    ///   `body` throws.
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        let nested = isInTransaction
        if !nested { try restoreSynchronousIfNeeded() }
        // A savepoint name need not be unique: RELEASE and ROLLBACK TO act on
        // the most recent savepoint of that name, which is ours.
        try execute(nested ? "SAVEPOINT swiftlet" : "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute(nested ? "RELEASE swiftlet" : "COMMIT")
            return result
        } catch {
            // SQLite rolls back by itself after some errors (SQLITE_FULL,
            // SQLITE_IOERR, ...); then there is nothing left to undo. A
            // failing rollback is not reported: the first error says more.
            if isInTransaction {
                if nested {
                    try? execute("ROLLBACK TO swiftlet")
                    try? execute("RELEASE swiftlet")
                } else {
                    try? execute("ROLLBACK")
                }
            }
            throw error
        }
    }
}
