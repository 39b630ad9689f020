import XMPPCore
import SQLiteKit

/// The client's local persistence: a message archive and a roster cache
/// for any number of accounts, in one SQLite file per client data
/// directory, each row keyed by the account's bare JID.
///
/// The connection lives on the store's own thread (a `StorageQueue`), as
/// GRDB keeps one connection per serial queue: every method hands its SQL
/// to that thread and suspends until it has run, so the client actor never
/// waits for the disk, and calls run in the order they were made. Another
/// process (a second CLI command) may open the same file: the connection
/// runs in WAL mode and waits up to `Database.Configuration`'s busy timeout
/// for the other's lock.
///
/// The archive is in `ClientStore+Archive.swift`, the roster cache in
/// `ClientStore+Roster.swift`.
public final class ClientStore: Sendable {
    /// The thread that owns the connection and runs the SQL.
    let queue: StorageQueue<Tables>

    /// Opens (creating if needed) the store at `path` and brings its schema
    /// up to date, on the store's new thread; waits until it is done.
    ///
    /// - Parameter path: The database file; its directory must exist.
    /// - Throws: `DatabaseError`, or `MigrationError` for a file written by
    ///   a newer version.
    public convenience init(path: String) throws {
        try self.init { try Database(path: path) }
    }

    /// Opens a new, empty store that lives in memory, for tests and for an
    /// app that keeps nothing.
    ///
    /// - Throws: `DatabaseError`.
    public static func inMemory() throws -> ClientStore {
        try ClientStore { try Database.inMemory() }
    }

    /// Starts the store's thread, which opens the database with `open` and
    /// migrates it; the database closes when the store is released.
    private init(open: @escaping @Sendable () throws -> Database) throws {
        queue = try StorageQueue(name: "swiftlet.client-store") {
            try Tables(database: open())
        } close: { tables in
            tables.database.close()
        }
    }

    /// The connection and the SQL the store runs on it, used only on the
    /// store's thread; not `Sendable`, like the `Database` it wraps.
    final class Tables {
        /// The connection; used by the extensions.
        let database: Database

        /// Brings `database`'s schema up to date and wraps it.
        init(database: Database) throws {
            try Self.migrator.migrate(database)
            self.database = database
        }
    }
}

extension ClientStore.Tables {
    /// The schema, as named migrations in order.
    ///
    /// Append new migrations at the end. Never edit, rename or reorder one
    /// that has shipped: existing files have run it and will skip it.
    static var migrator: Migrator {
        var migrator = Migrator()
        migrator.register("0001-accounts") { database in
            // Every other table refers to an account by this id, which keeps
            // their rows and indexes short.
            try database.execute(
                """
                CREATE TABLE accounts (
                    id INTEGER PRIMARY KEY,
                    jid TEXT NOT NULL UNIQUE
                )
                """)
        }
        migrator.register("0002-archive", migrate: createArchive)
        migrator.register("0003-roster", migrate: createRosterCache)
        migrator.register("0004-room-messages", migrate: addRoomNicknames)
        return migrator
    }

    // MARK: Accounts

    /// The id of `account`'s row, or `nil` when nothing was stored for it.
    func accountID(of account: JID) throws -> Int64? {
        try database.withCachedStatement("SELECT id FROM accounts WHERE jid = ?") { statement in
            try statement.bind(account.bare.description)
            return try statement.step() ? statement.int64(at: 0) : nil
        }
    }

    /// The id of `account`'s row, inserting the row first if needed; call
    /// inside the transaction of the write that needs it.
    func createAccountID(of account: JID) throws -> Int64 {
        if let id = try accountID(of: account) { return id }
        try run("INSERT INTO accounts (jid) VALUES (?)", account.bare.description)
        return database.lastInsertedRowID
    }

    // MARK: Helpers

    /// Runs one SQL statement that returns no rows, with `values` bound to
    /// its parameters in order; the statement is cached for the next call.
    ///
    /// - Throws: `DatabaseError`.
    func run(_ sql: String, _ values: (any DatabaseValueConvertible)?...) throws {
        try database.withCachedStatement(sql) { statement in
            for (offset, value) in values.enumerated() {
                try statement.bind(value, at: offset + 1)
            }
            try statement.run()
        }
    }

    /// Reads the JID in `column` of the current row of `statement`.
    ///
    /// - Throws: `DatabaseError` with `.corrupt` for `NULL` or a string that
    ///   is not a JID, which only a damaged file holds.
    static func jid(at column: Int, of statement: Statement) throws -> JID {
        guard let text = statement.string(at: column), let jid = try? JID(text) else {
            throw DatabaseError(
                resultCode: .corrupt, message: "damaged JID in the client store", sql: statement.sql
            )
        }
        return jid
    }

    /// The SQL form of a flag: 1 or 0.
    static func integer(_ flag: Bool) -> Int {
        flag ? 1 : 0
    }
}
