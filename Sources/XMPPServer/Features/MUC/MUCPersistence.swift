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

    /// Writes `room` (its settings, affiliations and subject), encoded
    /// in the job, off the rooms' lock and the event loop.
    func save(_ room: MUCRoom) {
        guard let name = room.jid.localpart else { return }
        let record = MUCRoomRecord(room)
        submit("save the room \(room.jid)") { stores in
            guard let data = record.encoded else { throw MUCRoomRecord.EncodingFailed() }
            try stores.mucRooms.save(StoredMUCRoom(name: name, data: data))
        }
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
    static func restore(_ stored: [StoredMUCRoom], service: String, occupantIDs: MUCOccupantIDs, log: Logger)
        -> [MUCRoom]
    {
        stored.compactMap { stored in
            guard let jid = try? JID(localpart: stored.name, domainpart: service),
                let room = MUCRoomRecord(decoding: stored.data)?.room(at: jid, occupantIDs: occupantIDs)
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
    /// A room that could not be encoded, which should not happen.
    struct EncodingFailed: Error {}

    var creator: JID
    var configuration: MUCRoomConfiguration
    var affiliations: [JID: MUCAffiliationRecord]
    var subject: Element?

    /// The parts of `room` storage keeps, taken without copying them.
    init(_ room: MUCRoom) {
        self.init(
            creator: room.creator, configuration: room.configuration, affiliations: room.affiliations,
            subject: room.subject)
    }

    /// A record of a room with these parts.
    init(
        creator: JID, configuration: MUCRoomConfiguration, affiliations: [JID: MUCAffiliationRecord],
        subject: Element?
    ) {
        self.creator = creator
        self.configuration = configuration
        self.affiliations = affiliations
        self.subject = subject
    }

    private enum CodingKeys: String, CodingKey {
        case creator, configuration, affiliations, subject
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        creator = try JID(try container.decode(String.self, forKey: .creator))
        configuration = try container.decode(MUCRoomConfiguration.self, forKey: .configuration)
        var affiliations: [JID: MUCAffiliationRecord] = [:]
        for (user, record) in try container.decode([String: MUCAffiliationRecord].self, forKey: .affiliations) {
            affiliations[try JID(user)] = record
        }
        self.affiliations = affiliations
        subject = try container.decodeIfPresent(String.self, forKey: .subject).flatMap(StoredStanza.parse)
    }

    /// The last subject change is kept serialized.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(creator.description, forKey: .creator)
        try container.encode(configuration, forKey: .configuration)
        try container.encode(
            Dictionary(uniqueKeysWithValues: affiliations.map { ($0.key.description, $0.value) }), forKey: .affiliations)
        try container.encodeIfPresent(subject.flatMap(StoredStanza.serialize), forKey: .subject)
    }

    init?(decoding data: String) {
        guard let record = try? JSONDecoder().decode(Self.self, from: Data(data.utf8)) else { return nil }
        self = record
    }

    var encoded: String? {
        (try? JSONEncoder().encode(self)).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// The room at `jid` this record keeps, empty and unlocked, its
    /// occupants given ids by `occupantIDs`.
    func room(at jid: JID, occupantIDs: MUCOccupantIDs) -> MUCRoom {
        var room = MUCRoom(jid: jid, creator: creator, configuration: configuration, occupantIDs: occupantIDs)
        room.affiliations = affiliations
        room.subject = subject
        return room
    }
}
