import SQLiteKit

/// An `UploadStore` in the table `uploads` (migration `0007-uploads`).
///
/// The slot id is the primary key; the index on `(account_id, size)`
/// serves the quota sum without reading the rows, and the cascade.
public final class SQLiteUploadStore: UploadStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func reserve(_ record: UploadRecord, quota: Int) throws -> Int? {
        try database.transaction {
            guard let accountID = try database.accountID(of: record.owner) else {
                throw UnknownAccountError(username: record.owner)
            }
            let used = try usage(accountID: accountID)
            guard used + record.quotaCharge <= quota else { return used }
            try database.run(
                """
                INSERT INTO uploads (slot_id, account_id, filename, size, content_type, created, uploaded)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, record.slotID, accountID, record.filename, record.size, record.contentType, record.created,
                record.isUploaded ? 1 : 0)
            return nil
        }
    }

    public func upload(_ slotID: String) throws -> UploadRecord? {
        let sql = """
            SELECT a.username, u.filename, u.size, u.content_type, u.created, u.uploaded
            FROM uploads AS u JOIN accounts AS a ON a.id = u.account_id
            WHERE u.slot_id = ?
            """
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(slotID)
            guard try statement.step() else { return nil }
            guard let owner = statement.string(at: 0), let filename = statement.string(at: 1),
                let contentType = statement.string(at: 3)
            else {
                throw DatabaseError(resultCode: .corrupt, message: "damaged upload record", sql: sql)
            }
            return UploadRecord(
                slotID: slotID, owner: owner, filename: filename, size: statement.int(at: 2),
                contentType: contentType, created: statement.int(at: 4), isUploaded: statement.int(at: 5) != 0)
        }
    }

    public func markUploaded(_ slotID: String) throws -> Bool {
        try database.run("UPDATE uploads SET uploaded = 1 WHERE slot_id = ?", slotID) > 0
    }

    public func usage(of username: String) throws -> Int {
        guard let accountID = try database.accountID(of: username) else { return 0 }
        return try usage(accountID: accountID)
    }

    public func slots(of username: String) throws -> [String] {
        let sql = "SELECT u.slot_id FROM uploads AS u JOIN accounts AS a ON a.id = u.account_id WHERE a.username = ?"
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(username)
            var slots: [String] = []
            while try statement.step() { slots.append(statement.string(at: 0) ?? "") }
            return slots
        }
    }

    private func usage(accountID: Int64) throws -> Int {
        let sql = "SELECT coalesce(sum(max(size, ?)), 0) FROM uploads WHERE account_id = ?"
        return try database.withCachedStatement(sql) { statement in
            try statement.bind(UploadRecord.minimumQuotaCharge, accountID)
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    public func removeExpired(createdBefore cutoff: Int, unusedCreatedBefore unusedCutoff: Int) throws -> [String] {
        try database.transaction {
            let condition = "created < ? OR (uploaded = 0 AND created < ?)"
            let slots = try database.withCachedStatement("SELECT slot_id FROM uploads WHERE \(condition)") {
                statement in
                try statement.bind(cutoff, unusedCutoff)
                var slots: [String] = []
                while try statement.step() {
                    if let slot = statement.string(at: 0) { slots.append(slot) }
                }
                return slots
            }
            try database.run("DELETE FROM uploads WHERE \(condition)", cutoff, unusedCutoff)
            return slots
        }
    }

    public func existingSlots(_ slotIDs: [String]) throws -> Set<String> {
        try database.withCachedStatement("SELECT 1 FROM uploads WHERE slot_id = ?") { statement in
            var existing: Set<String> = []
            for slot in slotIDs {
                try statement.bind(slot)
                if try statement.step() { existing.insert(slot) }
                statement.reset()
            }
            return existing
        }
    }
}
