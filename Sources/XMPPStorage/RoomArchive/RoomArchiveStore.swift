/// The archives of the group chat rooms (XEP-0313 §6, "MUC archives"):
/// one per room, owned by the room's bare address, holding the messages it
/// sent to its occupants.
///
/// Synchronous: the server calls it on the storage thread. Each item is an
/// `ArchiveItem` whose peer is the room's address with the sender's
/// nickname as resource, so that a `with` filter naming an occupant's room
/// address finds what it said. Sequences come from the caller, one counter
/// for all rooms in the order the rooms sent the messages, and name one item
/// of one room, never used again (`lastSequence()` outlives deleted items).
/// Room addresses are prepared bare JIDs, compared byte for byte.
public protocol RoomArchiveStore: AnyObject {
    /// Adds each item to its room's archive, skipping items whose sequence
    /// is stored already, and drops the oldest items of each room it added
    /// to beyond `limit` (the newest `limit` stay).
    ///
    /// - Returns: How many items were added.
    @discardableResult
    func append(_ items: [RoomArchiveItem], keepingPerRoom limit: Int) throws -> Int

    /// The highest sequence ever appended, deleted items included; 0 when
    /// nothing was ever appended.
    func lastSequence() throws -> Int64

    /// The page of `room`'s archive that `query` asks for, oldest first.
    ///
    /// - Throws: `ArchiveItemNotFound` when an item the query names is not
    ///   in this room's archive.
    func query(_ query: ArchiveQuery, ofRoom room: String) throws -> ArchivePage

    /// The item `sequence` of `room`'s archive, or nil.
    func item(_ sequence: Int64, ofRoom room: String) throws -> ArchiveItem?

    /// Replaces the stanza of the item `sequence` of `room`'s archive, as a
    /// moderator's retraction does (XEP-0425: a tombstone stays).
    ///
    /// - Returns: Whether there was such an item.
    @discardableResult
    func replaceStanza(of sequence: Int64, ofRoom room: String, with stanza: String) throws -> Bool

    /// The oldest and newest items of `room`'s archive, or `nil` when it is
    /// empty (XEP-0313 §5, archive metadata).
    func bounds(ofRoom room: String) throws -> (oldest: ArchiveItem, newest: ArchiveItem)?

    /// The number of items in `room`'s archive.
    func count(ofRoom room: String) throws -> Int

    /// Deletes `room`'s archive, as when the room is destroyed.
    func removeArchive(ofRoom room: String) throws

    /// Removes, from all rooms, the oldest items up to the first one (in
    /// sequence order) stamped at or after `timestamp`, at most `limit` of
    /// them, so that retention never leaves a hole in an archive
    /// (XEP-0313 §3.2: deleted messages "MUST be the oldest").
    ///
    /// - Returns: How many items were removed; `limit` means there may be
    ///   more.
    func removeMessages(before timestamp: Int, limit: Int) throws -> Int
}

/// A message of a room's archive, with the room that keeps it.
public struct RoomArchiveItem: Sendable, Hashable {
    /// The room's prepared bare address.
    public var room: String
    /// The message; its peer's resource is the sender's nickname.
    public var item: ArchiveItem

    /// Creates an item of `room`'s archive.
    public init(room: String, item: ArchiveItem) {
        self.room = room
        self.item = item
    }
}
