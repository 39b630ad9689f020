import Foundation
import Synchronization
import XMPPCore
import XMPPStorage

/// Writes persistent rooms to storage as they change, and reads them back
/// at start. `MUCRooms` calls it under its lock, so the writes reach the
/// storage queue in the order the changes happened; each only submits a
/// job, none waits for it.
final class MUCPersistence: Sendable {
    private struct Attachment {
        var storage: any StorageJobs
        var log: Logger
    }

    /// Where jobs go once the server started; before, nothing is written
    /// (no room can change before a user logs in).
    private let attachment = Mutex<Attachment?>(nil)

    init() {}

    /// Starts writing through `server`'s storage.
    func attach(to server: ServerContext) {
        attachment.withLock { $0 = Attachment(storage: server.storage, log: server.log) }
    }

    /// Writes `room` (its settings, affiliations and subject).
    func save(_ room: MUCRoom) {
        guard let name = room.jid.localpart, let data = MUCRoomRecord(room).encoded else { return }
        submit("save the room \(room.jid)") { stores in try stores.mucRooms.save(StoredMUCRoom(name: name, data: data)) }
    }

    /// Deletes the room `name`, no longer persistent or destroyed.
    func delete(_ name: String) {
        submit("delete the room \(name)") { stores in try stores.mucRooms.removeRoom(named: name) }
    }

    private func submit(_ what: String, _ job: @escaping @Sendable (Stores) throws -> Void) {
        guard let attached = attachment.withLock({ $0 }) else { return }
        attached.storage.submit(job) { result in
            if case .failure(let error) = result { attached.log.error("cannot \(what): \(error)") }
        }
    }

    /// The stored rooms of `service`, as rooms again; a room that cannot
    /// be read is logged and skipped.
    static func restore(_ stored: [StoredMUCRoom], service: String, log: Logger) -> [MUCRoom] {
        stored.compactMap { stored in
            guard let jid = try? JID(localpart: stored.name, domainpart: service),
                let record = MUCRoomRecord(decoding: stored.data), let room = record.room(at: jid)
            else {
                log.error("cannot read the stored room \(stored.name)@\(service); it is left out")
                return nil
            }
            return room
        }
    }
}

/// What storage keeps of a persistent room, as JSON.
struct MUCRoomRecord: Codable, Sendable {
    var creator: String
    var configuration: MUCRoomConfiguration
    var affiliations: [String: MUCAffiliationRecord]
    /// The last subject change, serialized.
    var subject: String?

    init(_ room: MUCRoom) {
        creator = room.creator.description
        configuration = room.configuration
        affiliations = Dictionary(uniqueKeysWithValues: room.affiliations.map { ($0.key.description, $0.value) })
        subject = room.subject.flatMap(StoredStanza.serialize)
    }

    init?(decoding data: String) {
        guard let record = try? JSONDecoder().decode(Self.self, from: Data(data.utf8)) else { return nil }
        self = record
    }

    var encoded: String? {
        (try? JSONEncoder().encode(self)).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// The room at `jid` this record keeps, empty and unlocked.
    func room(at jid: JID) -> MUCRoom? {
        guard let creator = try? JID(creator) else { return nil }
        var room = MUCRoom(jid: jid, creator: creator, configuration: configuration)
        room.affiliations = [:]
        for (user, record) in affiliations {
            guard let user = try? JID(user) else { return nil }
            room.affiliations[user] = record
        }
        room.subject = subject.flatMap(StoredStanza.parse)
        return room
    }
}
