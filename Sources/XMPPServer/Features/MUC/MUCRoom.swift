import XMPPCore

/// A stanza a room sends, and to which of its occupants' resources.
struct MUCDelivery: Sendable {
    var to: JID
    var element: Element
}

/// One room (XEP-0045): its occupants by nickname, its subject and its
/// history. A value kept by `MUCRooms` under its lock; each change returns
/// the stanzas it causes, which the caller sends once the lock is released.
///
/// The room is temporary, open, unmoderated and semi-anonymous (§4.2):
/// only moderators see the occupants' real JIDs.
struct MUCRoom: Sendable {
    /// The room's bare address, `room@conference.localhost`.
    let jid: JID
    /// The user who created it, who owns it.
    let creator: JID
    /// The occupants by nickname.
    var occupants: [String: MUCOccupant] = [:]
    /// The nickname of each joined resource.
    var nicks: [JID: String] = [:]
    /// The last subject change (`from` the occupant who made it, without
    /// `to`), or nil while the room has none.
    var subject: Element?
    var history: MUCHistory
    /// Whether the room archives its messages (XEP-0313 §6).
    var archives = true
    /// Where its occupant ids come from (XEP-0421).
    let occupantIDs: MUCOccupantIDs

    /// An empty room at `jid`, created by `creator`, keeping
    /// `historyLength` messages.
    init(jid: JID, creator: JID, historyLength: Int, occupantIDs: MUCOccupantIDs) {
        self.jid = jid
        self.creator = creator
        self.history = MUCHistory(capacity: historyLength)
        self.occupantIDs = occupantIDs
    }

    /// Whether no one is in the room any more.
    var isEmpty: Bool { occupants.isEmpty }

    /// The address of the occupant called `nick`, `room@service/nick`.
    func address(of nick: String) -> JID {
        (try? JID(localpart: jid.localpart, domainpart: jid.domainpart, resourcepart: nick)) ?? jid
    }

    /// The occupant that `resource` (a full JID) joined as.
    func occupant(joinedFrom resource: JID) -> MUCOccupant? {
        nicks[resource].flatMap { occupants[$0] }
    }

    /// `element` sent to every joined resource of every occupant, each
    /// copy with its `to`: one copy per resource, nothing else.
    func toEveryone(_ element: Element) -> [MUCDelivery] {
        nicks.keys.map { MUCDelivery(to: $0, element: element.addressed(to: $0)) }
    }
}
