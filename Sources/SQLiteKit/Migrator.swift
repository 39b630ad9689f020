/// Brings a database schema up to date with named, ordered migrations.
///
/// Each migration runs once per database, in registration order, inside its
/// own transaction together with the record that it ran (in the table
/// `swiftlet_migrations`), so a crash leaves it either fully applied or not
/// at all. A migration already recorded is skipped.
///
/// Never edit or reorder a migration that has shipped: databases out there
/// have already run it and will not run it again. Change the schema by
/// registering a new migration at the end.
public struct Migrator {
    /// One schema change.
    struct Migration {
        let name: String
        let migrate: (Database) throws -> Void
    }

    /// In registration order; internal so that upgrade tests can run the
    /// ones an older version had.
    private(set) var migrations: [Migration] = []

    /// Creates a migrator with no migrations.
    public init() {}

    /// The names of the registered migrations, in order.
    public var names: [String] {
        migrations.map(\.name)
    }

    /// Adds a migration after those already registered.
    ///
    /// - Parameters:
    ///   - name: A name unique within this migrator, recorded in the database
    ///     forever; for example `"0001-accounts"`.
    ///   - migrate: Changes the schema; it runs inside a transaction.
    /// - Precondition: No migration of that name is registered yet.
    public mutating func register(_ name: String, migrate: @escaping (Database) throws -> Void) {
        precondition(!names.contains(name), "migration \(name) registered twice")
        migrations.append(Migration(name: name, migrate: migrate))
    }

    /// Runs every registered migration that `database` has not run yet.
    ///
    /// Safe when another process migrates the same file at the same time:
    /// each migration checks its record inside its own write transaction.
    ///
    /// - Throws: `MigrationError` when the database has run migrations this
    ///   migrator does not know (it was written by a newer version), or
    ///   `DatabaseError`, or what a migration throws; the failing migration
    ///   is rolled back and those before it stay applied.
    public func migrate(_ database: Database) throws {
        try database.execute(
            """
            CREATE TABLE IF NOT EXISTS swiftlet_migrations (
                name TEXT PRIMARY KEY NOT NULL
            ) WITHOUT ROWID
            """)
        let unknown = try appliedMigrations(in: database).filter { !names.contains($0) }
        guard unknown.isEmpty else {
            throw MigrationError(unknownMigrations: unknown)
        }
        for migration in migrations {
            try database.transaction {
                guard try !isApplied(migration.name, in: database) else { return }
                try migration.migrate(database)
                try database.withCachedStatement(
                    "INSERT INTO swiftlet_migrations (name) VALUES (?)"
                ) { statement in
                    try statement.bind(migration.name)
                    try statement.run()
                }
            }
        }
    }

    /// The names of the migrations `database` has run, sorted by name.
    ///
    /// - Throws: `DatabaseError`, for example when the database was never migrated.
    public func appliedMigrations(in database: Database) throws -> [String] {
        try database.withCachedStatement("SELECT name FROM swiftlet_migrations ORDER BY name") {
            statement in
            var names: [String] = []
            while try statement.step() {
                names.append(statement.string(at: 0) ?? "")
            }
            return names
        }
    }

    private func isApplied(_ name: String, in database: Database) throws -> Bool {
        try database.withCachedStatement("SELECT 1 FROM swiftlet_migrations WHERE name = ?") {
            statement in
            try statement.bind(name)
            return try statement.step()
        }
    }
}

/// The database was migrated by a newer version of Swiftlet, whose schema
/// this version does not know; opening it could damage data.
public struct MigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The recorded migrations this version does not have.
    public let unknownMigrations: [String]

    /// Explains the refusal, for logs and the admin command.
    public var description: String {
        "the database has migrations this version does not know "
            + "(\(unknownMigrations.joined(separator: ", "))); it was written by a newer Swiftlet"
    }
}
