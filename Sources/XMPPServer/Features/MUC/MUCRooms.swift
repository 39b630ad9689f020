import Synchronization
import XMPPCore

/// Every room of the group chat service, in memory, shared by all loops:
/// each change runs under one lock and returns the stanzas it causes,
/// which the caller sends after (`MultiUserChat.send`).
final class MUCRooms: Sendable {
    /// The bounds the rooms keep to.
    struct Limits: Sendable {
        var historyLength: Int
        var maxOccupants: Int
        var maxRoomsPerUser: Int
    }

    private struct State {
        /// The rooms by localpart.
        var rooms: [String: MUCRoom] = [:]
        /// The rooms each joined resource is in, to take it out of all of
        /// them when its session ends.
        var roomsOf: [JID: Set<String>] = [:]
        /// How many existing rooms each user created.
        var created: [JID: Int] = [:]
    }

    let service: String
    let limits: Limits
    /// The rooms' occupant ids, keyed at start.
    let occupantIDs = MUCOccupantIDs()
    /// Where the rooms archive their messages.
    let archive: MUCArchive
    private let state = Mutex(State())

    /// No rooms yet at `service`.
    init(service: String, limits: Limits, archive: MUCArchive) {
        self.service = service
        self.limits = limits
        self.archive = archive
    }

    /// Joins `resource` to the room `name` as `nick`, creating the room
    /// (owned by the user) when it does not exist.
    ///
    /// - Throws: what `MUCRoom.join` throws, and `resource-constraint` when
    ///   the user already created `maxRoomsPerUser` rooms that exist.
    func join(
        _ name: String, _ resource: JID, nick: String, presence: Element, history: MUCHistory.Request
    ) throws(StanzaError) -> [MUCDelivery] {
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
                guard state.created[resource.bare, default: 0] < limits.maxRoomsPerUser else {
                    throw StanzaError(
                        .resourceConstraint, type: .wait,
                        text: "you may have at most \(limits.maxRoomsPerUser) rooms at once")
                }
                guard let jid = try? JID(localpart: name, domainpart: service) else {
                    throw StanzaError(.jidMalformed)
                }
                room = MUCRoom(
                    jid: jid, creator: resource.bare, historyLength: limits.historyLength, occupantIDs: occupantIDs)
            }
            let out: [MUCDelivery]
            do throws(StanzaError) {
                out = try room.join(
                    resource, nick: nick, presence: presence, history: history, created: creating,
                    maxOccupants: limits.maxOccupants)
            } catch {
                // A refused join changes nothing (its checks come first).
                if !creating { state.rooms[name] = room }
                throw error
            }
            if creating { state.created[resource.bare, default: 0] += 1 }
            // A new room does not inherit the archive of an earlier one of its name.
            if creating { archive.startAfresh(room.jid) }
            Self.store(room, named: name, acting: resource, in: &state)
            return out
        }
    }

    /// Runs `change` on the room `name`, which `resource` (the sender)
    /// acts in; nil when there is no such room.
    func change(
        _ name: String, by resource: JID, _ change: (inout MUCRoom) throws(StanzaError) -> [MUCDelivery]
    ) throws(StanzaError) -> [MUCDelivery]? {
        try state.withLock { state throws(StanzaError) in
            guard var room = state.rooms.removeValue(forKey: name) else { return nil }
            let out: [MUCDelivery]
            do throws(StanzaError) {
                out = try change(&room)
            } catch {
                // A refused change changes nothing (its checks come first).
                state.rooms[name] = room
                throw error
            }
            Self.store(room, named: name, acting: resource, in: &state)
            return out
        }
    }

    /// Takes `resource` out of every room it is in: its session ended, or
    /// it went unavailable.
    func leaveAll(_ resource: JID) -> [MUCDelivery] {
        state.withLock { state in
            var out: [MUCDelivery] = []
            for name in state.roomsOf[resource] ?? [] {
                guard var room = state.rooms.removeValue(forKey: name) else { continue }
                out += room.leave(resource)
                Self.store(room, named: name, acting: resource, in: &state)
            }
            return out
        }
    }

    /// The nickname `resource` joined the room `name` as, or nil.
    func nick(of resource: JID, in name: String) -> String? {
        state.withLock { $0.rooms[name]?.nicks[resource] }
    }

    /// A copy of the room `name`, or nil.
    func room(_ name: String) -> MUCRoom? {
        state.withLock { $0.rooms[name] }
    }

    /// Every room's address, sorted (every room is public for now).
    var roomAddresses: [JID] {
        state.withLock { $0.rooms.values.map(\.jid) }.sorted { $0.description < $1.description }
    }

    /// Keeps `room` after a change by `resource`: notes whether `resource`
    /// is still in it, and removes it once empty (rooms are temporary).
    private static func store(_ room: MUCRoom, named name: String, acting resource: JID, in state: inout State) {
        if room.nicks[resource] != nil {
            state.roomsOf[resource, default: []].insert(name)
        } else if var joined = state.roomsOf[resource] {
            joined.remove(name)
            state.roomsOf[resource] = joined.isEmpty ? nil : joined
        }
        guard room.isEmpty else {
            state.rooms[name] = room
            return
        }
        state.rooms[name] = nil
        let remaining = state.created[room.creator, default: 1] - 1
        state.created[room.creator] = remaining > 0 ? remaining : nil
    }
}
