import Testing

@testable import SQLiteKit

/// Statements, the statement cache, transactions and errors.
@Suite struct DatabaseTests {
    private func makeTable() throws -> Database {
        let database = try Database.inMemory()
        try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, data BLOB)")
        return database
    }

    private func names(in database: Database) throws -> [String] {
        let statement = try database.prepare("SELECT name FROM t ORDER BY id")
        var names: [String] = []
        while try statement.step() { names.append(statement.string(at: 0) ?? "NULL") }
        return names
    }

    @Test func valuesRoundTripThroughBindAndColumns() throws {
        let database = try Database.inMemory()
        let statement = try database.prepare("SELECT ?, ?, ?, ?, ?, ?, ?, ?")
        #expect(statement.columnCount == 8)
        let text = "nul\u{0}inside, emoji 🎭, é"
        try statement.bind(
            Int64.min, Int.max, text, "", [UInt8](), [0, 1, 0, 255] as [UInt8], nil,
            Optional<String>.none)
        #expect(try statement.step())
        #expect(statement.int64(at: 0) == Int64.min)
        #expect(statement.int(at: 1) == Int.max)
        #expect(statement.string(at: 2) == text)
        #expect(statement.string(at: 3) == "", "the empty string is not NULL")
        #expect(statement.blob(at: 4) == [], "the empty blob is not NULL")
        #expect(statement.blob(at: 5) == [0, 1, 0, 255])
        #expect(statement.string(at: 6) == nil)
        #expect(statement.blob(at: 7) == nil)
        #expect(try !statement.step())
    }

    @Test func typedBindsMatchTheGeneralOne() throws {
        let database = try Database.inMemory()
        let statement = try database.prepare("SELECT ?, ?, ?, ?, typeof(?4), ?")
        try statement.bind(integer: .min, at: 1)
        try statement.bind(text: "emoji 🎭, é", at: 2)
        try statement.bind(text: "", at: 3)
        try statement.bind(text: nil, at: 4)
        try statement.bind(integer: 7, at: 5)
        #expect(try statement.step())
        #expect(statement.int64(at: 0) == .min)
        #expect(statement.string(at: 1) == "emoji 🎭, é")
        #expect(statement.string(at: 2) == "", "the empty string is not NULL")
        #expect(statement.string(at: 3) == nil)
        #expect(statement.string(at: 4) == "null")
        #expect(statement.int(at: 5) == 7)
        #expect(throws: DatabaseError.self) { try statement.bind(integer: 1, at: 7) }
    }

    @Test func aStatementRunsAgainAfterReset() throws {
        let database = try makeTable()
        let insert = try database.prepare("INSERT INTO t (name) VALUES (?)")
        for name in ["a", "b", "c"] {
            try insert.bind(name, at: 1)
            try insert.run()
            insert.reset()
        }
        #expect(database.changes == 1)
        #expect(database.lastInsertedRowID == 3)
        #expect(try names(in: database) == ["a", "b", "c"])
    }

    @Test func prepareTakesExactlyOneStatement() throws {
        let database = try makeTable()
        for sql in ["SELECT 1; SELECT 2", "  -- only a comment"] {
            let error = try #require(throws: DatabaseError.self) { try database.prepare(sql) }
            #expect(error.resultCode == .misuse)
            #expect(error.sql == sql)
        }
        _ = try database.prepare("SELECT 1;  \n")
    }

    @Test func theCacheReusesStatementsAndClearsTheirBindings() throws {
        let database = try Database.inMemory()
        let sql = "SELECT ?"
        let first = try database.withCachedStatement(sql) { statement in
            try statement.bind("secret", at: 1)
            #expect(try statement.step())
            return ObjectIdentifier(statement)
        }
        let (second, stepped, value) = try database.withCachedStatement(sql) { statement in
            (ObjectIdentifier(statement), try statement.step(), statement.string(at: 0))
        }
        #expect(first == second)
        #expect(stepped, "reset after use, so it runs from the start")
        #expect(value == nil, "the binding was cleared")

        let nested = try database.withCachedStatement(sql) { outer in
            try database.withCachedStatement(sql) { inner in outer !== inner }
        }
        #expect(nested, "a statement in use is not handed out twice")
    }

    @Test func aTransactionCommitsWhenItsBodyReturns() throws {
        let database = try makeTable()
        let count = try database.transaction {
            #expect(database.isInTransaction)
            try database.execute("INSERT INTO t (name) VALUES ('kept')")
            return database.changes
        }
        #expect(count == 1)
        #expect(!database.isInTransaction)
        #expect(try names(in: database) == ["kept"])
    }

    @Test func aTransactionRollsBackWhenItsBodyThrows() throws {
        let database = try makeTable()
        #expect(throws: PlannedError.self) {
            try database.transaction {
                try database.execute("INSERT INTO t (name) VALUES ('lost')")
                throw PlannedError()
            }
        }
        #expect(!database.isInTransaction)
        #expect(try names(in: database) == [])
    }

    @Test func aNestedTransactionRollsBackOnlyItself() throws {
        let database = try makeTable()
        try database.transaction {
            try database.execute("INSERT INTO t (name) VALUES ('outer')")
            #expect(throws: PlannedError.self) {
                try database.transaction {
                    try database.execute("INSERT INTO t (name) VALUES ('inner')")
                    throw PlannedError()
                }
            }
            try database.transaction {
                try database.execute("INSERT INTO t (name) VALUES ('second inner')")
            }
        }
        #expect(try names(in: database) == ["outer", "second inner"])
    }

    @Test func aFailedStatementInsideATransactionRollsItAllBack() throws {
        let database = try makeTable()
        try database.execute("INSERT INTO t (name) VALUES ('taken')")
        #expect(throws: DatabaseError.self) {
            try database.transaction {
                try database.execute("INSERT INTO t (name) VALUES ('new')")
                try database.execute("INSERT INTO t (name) VALUES ('taken')")
            }
        }
        #expect(try names(in: database) == ["taken"])
    }

    @Test func anErrorCarriesCodeMessageAndSQLButNoBoundValue() throws {
        let database = try makeTable()
        let secret = "hunter2-very-secret"
        let sql = "INSERT INTO t (name, data) VALUES (?, ?)"
        let insert = try database.prepare(sql)
        try insert.bind(secret, Array(secret.utf8))
        try insert.run()
        insert.reset()

        let error = try #require(throws: DatabaseError.self) { try insert.run() }
        #expect(error.resultCode == .constraintUnique)
        #expect(error.resultCode.primaryResultCode == .constraint)
        #expect(error.message.contains("UNIQUE constraint failed: t.name"))
        #expect(error.sql == sql)
        for text in [error.description, String(reflecting: error), "\(error)"] {
            #expect(!text.contains(secret))
            #expect(text.contains(sql))
        }
    }

    @Test func syntaxErrorsNameTheirSQL() throws {
        let database = try Database.inMemory()
        let error = try #require(throws: DatabaseError.self) {
            try database.execute("CREATE TABLE oops (")
        }
        #expect(error.resultCode == .error)
        #expect(error.sql == "CREATE TABLE oops (")
        #expect(error.description.contains("SQLite error 1 (SQL logic error)"))
    }

    @Test func resultCodesMatchByPrimaryOrExactCode() throws {
        #expect(ResultCode.constraint ~= ResultCode.constraintUnique)
        #expect(ResultCode.constraintUnique ~= ResultCode.constraintUnique)
        #expect(!(ResultCode.constraintUnique ~= ResultCode.constraintForeignKey))
        #expect(!(ResultCode.constraintUnique ~= ResultCode.constraint))
        #expect(!(ResultCode.busy ~= ResultCode.constraintUnique))
        #expect(ResultCode.constraintUnique.rawValue == 2067)
        #expect(ResultCode.constraintForeignKey.rawValue == 787)

        let database = try makeTable()
        try database.execute("INSERT INTO t (name) VALUES ('a')")
        var matched = ""
        do {
            try database.execute("INSERT INTO t (name) VALUES ('a')")
        } catch ResultCode.busy {
            matched = "busy"
        } catch ResultCode.constraint {
            matched = "constraint"
        }
        #expect(matched == "constraint")
    }

    @Test func foreignKeysAreEnforced() throws {
        let database = try Database.inMemory()
        try database.execute(
            """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (parent INTEGER REFERENCES parent (id) ON DELETE CASCADE);
            """)
        let error = try #require(throws: DatabaseError.self) {
            try database.execute("INSERT INTO child VALUES (42)")
        }
        #expect(error.resultCode == .constraintForeignKey)
    }

    @Test func closingTwiceIsHarmless() throws {
        let database = try Database.inMemory()
        database.close()
        database.close()
    }
}
