import Synchronization

/// One persistent group chat room as storage keeps it (XEP-0045 §10.2
/// `muc#roomconfig_persistentroom`): its name (the localpart of its
/// address) and the server's own encoding of its settings, affiliations
/// and subject, which the store does not read.
public struct StoredMUCRoom: Sendable, Hashable {
    public var name: String
    public var data: String

    /// A room named `name` kept as `data`.
    public init(name: String, data: String) {
        self.name = name
        self.data = data
    }
}

/// The persistent rooms of the group chat service, loaded at start and
/// written as they change. Rooms belong to the service, not to an account:
/// deleting the account of a room's owner keeps the room.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
public protocol MUCRoomStore: AnyObject {
    /// Every stored room, by name.
    func rooms() throws -> [StoredMUCRoom]

    /// Stores `room`, replacing the one of its name.
    func save(_ room: StoredMUCRoom) throws

    /// Removes the room `name`, if stored.
    func removeRoom(named name: String) throws
}

/// A `MUCRoomStore` in memory, for tests and in-memory servers.
public final class InMemoryMUCRoomStore: MUCRoomStore {
    private let stored = Mutex<[String: String]>([:])

    /// No rooms.
    public init() {}

    public func rooms() throws -> [StoredMUCRoom] {
        stored.withLock { $0.map { StoredMUCRoom(name: $0.key, data: $0.value) } }.sorted { $0.name < $1.name }
    }

    public func save(_ room: StoredMUCRoom) throws {
        stored.withLock { $0[room.name] = room.data }
    }

    public func removeRoom(named name: String) throws {
        _ = stored.withLock { $0.removeValue(forKey: name) }
    }
}
