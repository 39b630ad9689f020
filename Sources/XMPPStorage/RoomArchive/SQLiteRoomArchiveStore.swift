import SQLiteKit

/// A `RoomArchiveStore` in the table `muc_archive` (migration
/// `0016-muc-archive`): one row per message, its rowid the sequence
/// (`AUTOINCREMENT`, so that `sqlite_sequence` remembers the highest one
/// after deletions), and an index on the room, which SQLite orders by rowid
/// within each room: it serves pages in either direction, counts, the
/// trimming to a room's limit and the deletion of a room's archive.
public final class SQLiteRoomArchiveStore: RoomArchiveStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func append(_ items: [RoomArchiveItem], keepingPerRoom limit: Int) throws -> Int {
        var added = 0
        var touched: Set<String> = []
        try database.withCachedStatement(
            """
            INSERT INTO muc_archive (id, room, timestamp, nick, stanza) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (id) DO NOTHING
            """
        ) { statement in
            for entry in items {
                let item = entry.item
                precondition(item.sequence > 0, "archive sequences start at 1")
                try statement.bind(item.sequence, entry.room, item.timestamp, item.peer.resource ?? "", item.stanza)
                try statement.run()
                statement.reset()
                guard database.changes > 0 else { continue }
                added += 1
                touched.insert(entry.room)
            }
        }
        // The newest `limit` stay: everything up to the one just older.
        try database.withCachedStatement(
            """
            DELETE FROM muc_archive WHERE room = ?1 AND id <= (
                SELECT id FROM muc_archive WHERE room = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)
            """
        ) { statement in
            for room in touched {
                try statement.bind(room, limit)
                try statement.run()
                statement.reset()
            }
        }
        return added
    }

    public func lastSequence() throws -> Int64 {
        try database.withCachedStatement("SELECT seq FROM sqlite_sequence WHERE name = 'muc_archive'") { statement in
            try statement.step() ? statement.int64(at: 0) : 0
        }
    }

    public func query(_ query: ArchiveQuery, ofRoom room: String) throws -> ArchivePage {
        var filter = SQLFilter("i.room = ?", room)
        if let with = query.with {
            // Another address than the room's matches nothing.
            filter.add("i.room = ?", with.bare)
            if let nick = with.resource { filter.add("i.nick = ?", nick) }
        }
        return try filter.page(
            query, counting: "muc_archive AS i", reading: Self.columns, from: "muc_archive AS i", in: database,
            contains: { try self.item($0, ofRoom: room) != nil }, item: Self.item(from:))
    }

    public func item(_ sequence: Int64, ofRoom room: String) throws -> ArchiveItem? {
        try database.withCachedStatement("SELECT \(Self.columns) FROM muc_archive AS i WHERE i.id = ? AND i.room = ?") {
            statement in
            try statement.bind(sequence, room)
            return try statement.step() ? try Self.item(from: statement) : nil
        }
    }

    public func replaceStanza(of sequence: Int64, ofRoom room: String, with stanza: String) throws -> Bool {
        try database.withCachedStatement("UPDATE muc_archive SET stanza = ? WHERE id = ? AND room = ?") { statement in
            try statement.bind(stanza, sequence, room)
            try statement.run()
            return database.changes > 0
        }
    }

    public func bounds(ofRoom room: String) throws -> (oldest: ArchiveItem, newest: ArchiveItem)? {
        func edge(_ order: String) throws -> ArchiveItem? {
            try database.withCachedStatement(
                "SELECT \(Self.columns) FROM muc_archive AS i WHERE i.room = ? ORDER BY i.id \(order) LIMIT 1"
            ) { statement in
                try statement.bind(room)
                return try statement.step() ? try Self.item(from: statement) : nil
            }
        }
        guard let oldest = try edge("ASC"), let newest = try edge("DESC") else { return nil }
        return (oldest, newest)
    }

    public func count(ofRoom room: String) throws -> Int {
        try database.withCachedStatement("SELECT count(*) FROM muc_archive WHERE room = ?") { statement in
            try statement.bind(room)
            _ = try statement.step()
            return statement.int(at: 0)
        }
    }

    public func removeArchive(ofRoom room: String) throws {
        try database.withCachedStatement("DELETE FROM muc_archive WHERE room = ?") { statement in
            try statement.bind(room)
            try statement.run()
        }
    }

    public func removeMessages(before timestamp: Int, limit: Int) throws -> Int {
        let firstKept = try database.firstArchiveID(in: "muc_archive", stampedFrom: timestamp)
        return try database.withCachedStatement(
            "DELETE FROM muc_archive WHERE id IN (SELECT id FROM muc_archive WHERE id < ? ORDER BY id LIMIT ?)"
        ) { statement in
            try statement.bind(firstKept, limit)
            try statement.run()
            return database.changes
        }
    }

    /// An item's columns, in the order `item(from:)` reads them.
    private static let columns = "i.id, i.timestamp, i.room, i.nick, i.stanza"

    /// The item in the columns `columns`.
    private static func item(from statement: Statement) throws -> ArchiveItem {
        guard let room = statement.string(at: 2), let nick = statement.string(at: 3),
            let stanza = statement.string(at: 4)
        else {
            throw DatabaseError(resultCode: .corrupt, message: "damaged room archive record", sql: statement.sql)
        }
        return ArchiveItem(
            sequence: statement.int64(at: 0), timestamp: statement.int(at: 1),
            peer: ArchivePeer(bare: room, resource: nick), stanza: stanza)
    }
}
