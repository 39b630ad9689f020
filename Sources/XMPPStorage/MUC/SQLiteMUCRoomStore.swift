import SQLiteKit

/// A `MUCRoomStore` in the table `muc_rooms` (migration `0015-muc-rooms`):
/// one row per room, keyed by its name.
public final class SQLiteMUCRoomStore: MUCRoomStore {
    private let database: Database

    /// Creates a store on a migrated database, to be used on the thread that
    /// owns `database`.
    public init(database: Database) {
        self.database = database
    }

    public func rooms() throws -> [StoredMUCRoom] {
        try database.withCachedStatement("SELECT name, data FROM muc_rooms ORDER BY name") { statement in
            var rooms: [StoredMUCRoom] = []
            while try statement.step() {
                rooms.append(StoredMUCRoom(name: statement.string(at: 0) ?? "", data: statement.string(at: 1) ?? ""))
            }
            return rooms
        }
    }

    public func save(_ room: StoredMUCRoom) throws {
        let sql = """
            INSERT INTO muc_rooms (name, data) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET data = excluded.data
            """
        try database.withCachedStatement(sql) { statement in
            try statement.bind(room.name, room.data)
            try statement.run()
        }
    }

    public func removeRoom(named name: String) throws {
        try database.withCachedStatement("DELETE FROM muc_rooms WHERE name = ?") { statement in
            try statement.bind(name)
            try statement.run()
        }
    }
}
