import Synchronization
import XMPPCore

/// Every room of the group chat service, in memory, shared by all loops:
/// each change runs under one lock and returns the stanzas it causes,
/// which the caller sends after (`MultiUserChat.send`). Persistent rooms
/// are written to storage through `persistence` as they change.
final class MUCRooms: Sendable {
    /// The bounds the rooms keep to.
    struct Limits: Sendable {
        var historyLength: Int
        var maxOccupants: Int
        var maxRoomsPerUser: Int
        var maxAffiliations: Int
        /// The users who may create rooms; empty: every local user.
        var creators: Set<JID>
    }

    private struct State {
        /// The rooms by localpart.
        var rooms: [String: MUCRoom] = [:]
        /// The rooms each resource joined, to take it out of all of them
        /// when its session ends. A room it leaves goes from its list; one
        /// it was removed from or that ended stays listed until then, at
        /// most one entry per room it joined (leaving a room one is not in
        /// does nothing).
        var roomsOf: [JID: Set<String>] = [:]
        /// How many existing rooms each user created.
        var created: [JID: Int] = [:]
    }

    let service: String
    let limits: Limits
    let persistence: MUCPersistence
    /// The rooms' occupant ids, keyed at start.
    let occupantIDs = MUCOccupantIDs()
    /// Where the rooms archive their messages.
    let archive: MUCArchive
    private let state = Mutex(State())

    /// No rooms yet at `service`.
    init(service: String, limits: Limits, archive: MUCArchive, persistence: MUCPersistence = MUCPersistence()) {
        self.service = service
        self.limits = limits
        self.archive = archive
        self.persistence = persistence
    }

    /// The bounds a room's configuration may reach.
    var configurationLimits: MUCRoom.ConfigurationLimits {
        MUCRoom.ConfigurationLimits(maxUsers: limits.maxOccupants, historyLength: limits.historyLength)
    }

    /// Joins `resource` to the room `name` as `nick`, creating the room
    /// (owned by the user, locked until configured) when it does not
    /// exist.
    ///
    /// - Throws: what `MUCRoom.join` throws; `not-allowed` when the user
    ///   may not create rooms (`muc_room_creators`), `resource-constraint`
    ///   when it already created `maxRoomsPerUser` rooms that exist.
    func join(_ name: String, _ resource: JID, nick: String, _ request: MUCRoom.JoinRequest) throws(StanzaError)
        -> [MUCDelivery]
    {
        let limits = limits
        let (service, occupantIDs, archive) = (service, occupantIDs, archive)
        return try state.withLock { state throws(StanzaError) in
            // Taken out of the table while it changes, so that changing it
            // copies nothing (occupants, history).
            var room: MUCRoom
            let creating: Bool
            if let existing = state.rooms.removeValue(forKey: name) {
                room = existing
                creating = false
            } else {
                creating = true
                guard limits.creators.isEmpty || limits.creators.contains(resource.bare) else {
                    throw StanzaError(.notAllowed, type: .cancel, text: "you may not create rooms on this service")
                }
                guard state.created[resource.bare, default: 0] < limits.maxRoomsPerUser else {
                    throw StanzaError(
                        .resourceConstraint, type: .wait,
                        text: "you may have at most \(limits.maxRoomsPerUser) rooms at once")
                }
                guard let jid = try? JID(localpart: name, domainpart: service) else {
                    throw StanzaError(.jidMalformed)
                }
                room = MUCRoom(
                    jid: jid, creator: resource.bare,
                    configuration: MUCRoomConfiguration(
                        maxUsers: limits.maxOccupants, historyLength: limits.historyLength),
                    occupantIDs: occupantIDs)
                room.isLocked = request.knowsMUC
            }
            let before = room.snapshot
            let out: [MUCDelivery]
            do throws(StanzaError) {
                out = try room.join(
                    resource, nick: nick, request, created: creating, serviceLimit: limits.maxOccupants)
            } catch {
                // A refused join changes nothing (its checks come first).
                if !creating { state.rooms[name] = room }
                throw error
            }
            if creating { state.created[resource.bare, default: 0] += 1 }
            state.roomsOf[resource, default: []].insert(name)
            // A new room does not inherit the archive of an earlier one of its name.
            if creating { archive.startAfresh(room.jid) }
            store(room, named: name, before: before, in: &state)
            return out
        }
    }

    /// Runs `change` on the room `name`; nil when there is no such room.
    /// With `leaving`, a resource the change may take out of the room,
    /// the room is no longer listed among that resource's.
    func change(
        _ name: String, leaving: JID? = nil, _ change: (inout MUCRoom) throws(StanzaError) -> [MUCDelivery]
    ) throws(StanzaError) -> [MUCDelivery]? {
        try state.withLock { state throws(StanzaError) in
            defer {
                if let leaving, state.rooms[name]?.nicks[leaving] == nil, var joined = state.roomsOf[leaving] {
                    joined.remove(name)
                    state.roomsOf[leaving] = joined.isEmpty ? nil : joined
                }
            }
            guard var room = state.rooms.removeValue(forKey: name) else { return nil }
            let before = room.snapshot
            let out: [MUCDelivery]
            do throws(StanzaError) {
                out = try change(&room)
            } catch {
                // A refused change changes nothing (its checks come first).
                state.rooms[name] = room
                throw error
            }
            store(room, named: name, before: before, in: &state)
            return out
        }
    }

    /// Takes `resource` out of every room it is in: its session ended, or
    /// it went unavailable.
    func leaveAll(_ resource: JID) -> [MUCDelivery] {
        state.withLock { state in
            var out: [MUCDelivery] = []
            for name in state.roomsOf.removeValue(forKey: resource) ?? [] {
                guard var room = state.rooms.removeValue(forKey: name) else { continue }
                let before = room.snapshot
                out += room.leave(resource)
                store(room, named: name, before: before, in: &state)
            }
            return out
        }
    }

    /// Puts back the persistent rooms storage kept, at start, before any
    /// user can join.
    func restore(_ restored: [MUCRoom]) {
        state.withLock { state in
            for room in restored {
                guard let name = room.jid.localpart else { continue }
                state.rooms[name] = room
                state.created[room.creator, default: 0] += 1
            }
        }
    }

    /// The nickname `resource` joined the room `name` as, or nil.
    func nick(of resource: JID, in name: String) -> String? {
        state.withLock { $0.rooms[name]?.nicks[resource] }
    }

    /// A copy of the room `name`, or nil: a value, read without the lock
    /// (its parts are shared until the room changes).
    func room(_ name: String) -> MUCRoom? {
        state.withLock { $0.rooms[name] }
    }

    /// `read`'s answer about the room `name`, read under the lock, or nil
    /// when there is no such room.
    func read<Value>(_ name: String, _ read: (borrowing MUCRoom) throws(StanzaError) -> Value) throws(StanzaError)
        -> Value?
    {
        try state.withLock { state throws(StanzaError) in
            guard let room = state.rooms[name] else { return nil }
            return try read(room)
        }
    }

    /// The addresses and names of the rooms the service lists (public and
    /// unlocked), sorted.
    var publicRooms: [(jid: JID, name: String)] {
        state.withLock { state in
            state.rooms.values.filter { $0.configuration.isPublic && !$0.isLocked }.map {
                (jid: $0.jid, name: $0.configuration.name.isEmpty ? $0.jid.localpart ?? "" : $0.configuration.name)
            }
        }.sorted { $0.jid.description < $1.jid.description }
    }

    /// Copies of every room, sorted by address, for the admin page.
    var all: [MUCRoom] {
        state.withLock { Array($0.rooms.values) }.sorted { $0.jid.description < $1.jid.description }
    }

    /// Keeps `room` after a change: writes or deletes what storage keeps
    /// of it, and removes it once destroyed, or empty and temporary.
    private func store(_ room: MUCRoom, named name: String, before: MUCRoom.Snapshot, in state: inout State) {
        let persistent = room.configuration.persistent && !room.isDestroyed
        if persistent, room.revision != before.revision || !before.persistent {
            persistence.save(room)
        } else if before.persistent, !persistent {
            persistence.delete(name)
        }
        guard room.isDestroyed || (room.isEmpty && !room.configuration.persistent) else {
            state.rooms[name] = room
            return
        }
        // No one can read the archive of a room that is gone.
        archive.startAfresh(room.jid)
        let remaining = state.created[room.creator, default: 1] - 1
        state.created[room.creator] = remaining > 0 ? remaining : nil
    }
}

extension MUCRoom {
    /// What `MUCRooms` compares after a change: whether what storage
    /// keeps changed.
    struct Snapshot {
        var revision: Int
        var persistent: Bool
    }

    var snapshot: Snapshot {
        Snapshot(revision: revision, persistent: configuration.persistent)
    }
}
