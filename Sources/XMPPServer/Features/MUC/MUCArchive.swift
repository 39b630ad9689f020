import XMPPCore
import XMPPStorage

/// XEP-0313 §6 for rooms, with XEP-0359 stanza ids: each room that
/// `archives` keeps the groupchat messages with a body it sends (not chat
/// states, not changes of subject), once per room, owned by the room's
/// bare address; every occupant's copy, and the history, carry
/// `<stanza-id by='room@service'/>` with the archive id.
///
/// Writes are grouped as the users' archive groups them (`ArchiveQueue`):
/// the room numbers a message under its lock, and the storage thread
/// writes what waits in one transaction, keeping each room's newest
/// `muc_archive_max_messages`; `mam_retention` deletes older messages as
/// in the users' archives. A query flushes first, so it sees every message
/// sent before it.
///
/// Rooms are temporary: a room created under the name of one that is gone
/// (or that existed before a restart) is another room, and starts with an
/// empty archive, as a temporary room of Prosody loses its archive when it
/// goes.
///
/// Who may read a room's archive: its occupants (any resource of a user
/// joined to it) and its owner; anyone else gets `forbidden`. Prosody lets
/// anyone read the archive of a room that is not members-only; rooms here
/// do not say yet whether they are, so the archive is kept to those in the
/// room.
final class MUCArchive: Sendable {
    /// A change waiting for the storage thread.
    struct Job: Sendable {
        enum Change: Sendable {
            /// A message `nick` sent, numbered `sequence`.
            case message(Element, nick: String, timestamp: Int, sequence: Int64)
            /// The room starts with an empty archive.
            case erase
        }

        let room: String
        let change: Change
    }

    /// How long after a failed load of the last sequence it is tried again;
    /// meanwhile nothing is archived.
    static let loadRetryInterval = Duration.seconds(30)

    /// The features a room that archives adds to its disco#info.
    static let features = [NS.mam, MessageArchive.extendedFeature, NS.stanzaID]

    let ids = ArchiveIDs(purpose: "swiftlet room archive ids")
    /// The most messages one room's archive keeps (`muc_archive_max_messages`).
    let maxMessages: Int
    /// How long messages are kept (`mam_retention`), or nil for ever.
    let retention: Duration?
    private let queue = ArchiveQueue<Job>()

    /// An archive keeping at most `maxMessages` per room, none for longer
    /// than `retention`.
    init(maxMessages: Int, retention: Duration?) {
        self.maxMessages = maxMessages
        self.retention = retention
    }

    /// Sets the id key and loads the last sequence (until it has loaded,
    /// rooms archive nothing); then purges expired messages now and every
    /// hour, stamping with `clock`.
    func start(_ server: ServerContext, clock: WallClock) {
        ids.configure(secret: server.scramSecret)
        let queue = queue
        server.loadAtStart(
            "the room archives' state", until: "no room archives anything", retryInterval: Self.loadRetryInterval
        ) { stores in
            queue.resume(after: try stores.roomArchive.lastSequence())
        }
        guard let retention else { return }
        ArchiveRetention(retention: retention, clock: clock, name: "room archive") { stores, cutoff, limit in
            try stores.roomArchive.removeMessages(before: cutoff, limit: limit)
        }.start(server)
    }

    /// Numbers `message` (as occupants get it, without `to`), sent by `nick`
    /// of `room` at `received`, and queues it for the storage thread.
    /// - Returns: Its stanza id, or nil before the state has loaded.
    func record(_ message: Element, room: JID, nick: String, received: Int) -> String? {
        let appended = queue.append(count: 1) { sequence in
            Job(room: room.description, change: .message(message, nick: nick, timestamp: received, sequence: sequence))
        }
        return appended.map { ids.id(for: $0.firstSequence) }
    }

    /// Queues the removal of what `room`'s archive holds, for a room just
    /// created: rooms are temporary, and a new one of the same name is
    /// another room, whose occupants must not read the last one's messages.
    /// Queued in order with the messages (under the rooms' lock), so that it
    /// comes before any of the new room's; before the state has loaded,
    /// nothing is queued (`start` happens before any session).
    func startAfresh(_ room: JID) {
        _ = queue.append(count: 0) { _ in Job(room: room.description, change: .erase) }
    }

    /// Fills `room`'s history, after a restart, with the newest messages
    /// of its archive, as the room sent them (with their stanza ids and a
    /// delay from the room); run in a storage job.
    func fillHistory(of room: inout MUCRoom, from stores: Stores) throws {
        let newest = ArchiveQuery(position: .last, max: room.history.capacity)
        for item in try stores.roomArchive.query(newest, ofRoom: room.jid.description).items {
            guard var message = StoredStanza.parse(item.stanza) else { continue }
            message.append(
                Element(
                    "stanza-id", namespace: NS.stanzaID,
                    attributes: ["id": ids.id(for: item.sequence), "by": room.jid.description]))
            message.append(.delay(from: room.jid.description, at: item.timestamp))
            room.history.append(message, received: item.timestamp)
        }
    }

    /// Queues a flush of what rooms recorded, after the change that did
    /// it; when the disk falls behind, `session` (the sender) waits for
    /// the writes queued so far, so that the waiting jobs cannot grow
    /// without bound.
    func flushSoon(after session: ClientSession) {
        let log = session.log
        let waiting = queue.flushSoon(storage: session.server.storage, log: log) { [self] stores in
            try flush(stores)
        }
        if waiting > ArchiveQueue<Job>.highWaterMark { session.withStorage({ _ in }, then: { _ in }) }
    }

    /// Writes every waiting change, in order, in one transaction that does
    /// not wait for the disk (as the users' archive); call on the storage
    /// thread.
    func flush(_ stores: Stores) throws {
        let jobs = queue.take()
        guard !jobs.isEmpty else { return }
        try stores.inTransaction(durable: false) {
            var items: [RoomArchiveItem] = []
            for job in jobs {
                switch job.change {
                case .message(let message, let nick, let timestamp, let sequence):
                    guard let stanza = StoredStanza.serialize(message) else { continue }
                    items.append(RoomArchiveItem(
                        room: job.room,
                        item: ArchiveItem(
                            sequence: sequence, timestamp: timestamp,
                            peer: ArchivePeer(bare: job.room, resource: nick), stanza: stanza)))
                case .erase:
                    try stores.roomArchive.append(items, keepingPerRoom: maxMessages)
                    items = []
                    try stores.roomArchive.removeArchive(ofRoom: job.room)
                }
            }
            try stores.roomArchive.append(items, keepingPerRoom: maxMessages)
        }
    }

    // MARK: - Queries

    /// Answers a query of `room`'s archive (XEP-0313 §4, §6): each result
    /// `from` the room, the sender's room address on the message inside.
    ///
    /// - Throws: `forbidden` for someone neither in the room nor its owner.
    func query(_ request: IQRequest, room: MUCRoom) throws -> IQAnswer {
        let requester = try reader(request, of: room)
        let payload = request.iq.payload!
        let queries = ArchiveQueries(ids: ids)
        let query = try queries.query(from: payload)
        let address = room.jid
        return .afterStorage({ [self] stores in
            try flush(stores)
            return try queries.run { try stores.roomArchive.query(query, ofRoom: address.description) }
        }) { page in
            .result(queries.send(page, for: payload, from: address, to: requester, session: request.session))
        }
    }

    /// Answers a metadata request of `room`'s archive (XEP-0313 §5).
    ///
    /// - Throws: `forbidden` for someone neither in the room nor its owner.
    func metadata(_ request: IQRequest, room: MUCRoom) throws -> IQAnswer {
        _ = try reader(request, of: room)
        let (queries, address) = (ArchiveQueries(ids: ids), room.jid.description)
        return .afterStorage({ [self] stores in
            try flush(stores)
            return try stores.roomArchive.bounds(ofRoom: address)
        }) { bounds in
            .result(queries.metadata(bounds))
        }
    }

    /// The sender of `request`, who may read `room`'s archive.
    ///
    /// - Throws: `forbidden` for someone neither in the room nor its owner.
    private func reader(_ request: IQRequest, of room: MUCRoom) throws(StanzaError) -> JID {
        guard let requester = request.session.jid, room.mayReadArchive(requester) else {
            throw StanzaError(.forbidden, text: "only the room's occupants may read its archive")
        }
        return requester
    }
}

extension MUCRoom {
    /// Whether `resource`'s user may read the room's archive: it is in the
    /// room from one of its resources, or is an owner or admin of it;
    /// never an outcast.
    func mayReadArchive(_ resource: JID) -> Bool {
        let user = resource.bare
        let affiliation = affiliation(of: user)
        guard affiliation != .outcast else { return false }
        return affiliation >= .admin || occupants.values.contains { $0.user == user }
    }

    /// The features this room adds to its disco#info for the archive, the
    /// occupant ids and moderation (XEP-0313, XEP-0359, XEP-0421, XEP-0425).
    var archiveFeatures: [String] {
        (archives ? MUCArchive.features : []) + [NS.occupantID, NS.messageModerate, NS.messageRetract]
    }

    /// Stamps `message` with the archive's id when the room archives and
    /// the message is worth it (or `always`), and hands it to `archive`.
    func archived(
        _ message: Element, nick: String, received: Int, archive: MUCArchive, always: Bool = false
    ) -> Element {
        guard archives, always || MessageArchive.isArchivable(message, types: [.groupchat]),
            let id = archive.record(message, room: jid, nick: nick, received: received)
        else { return message }
        var stamped = message
        stamped.append(Element("stanza-id", namespace: NS.stanzaID, attributes: ["id": id, "by": jid.description]))
        return stamped
    }
}

extension MultiUserChat {
    /// The rooms' archive.
    var archive: MUCArchive { rooms.archive }

    /// The IQs to a room's bare address that its archive and moderation
    /// answer, or nil for another.
    func archiveAnswer(_ request: IQRequest, room: MUCRoom) throws -> IQAnswer? {
        let payload = request.iq.payload!
        switch (request.iq.type, payload.namespace, payload.name) {
        case (.set, NS.mam, "query"): return try archive.query(request, room: room)
        case (.get, NS.mam, "query"): return ArchiveQueries.formAnswer
        case (.get, NS.mam, "metadata"): return try archive.metadata(request, room: room)
        case (.set, NS.messageModerate, "moderate"): return try moderate(request, room: room)
        default: return nil
        }
    }
}
