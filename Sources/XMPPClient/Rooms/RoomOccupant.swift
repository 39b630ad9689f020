import XMPPCore

/// What an occupant may do in a room right now (XEP-0045 §5.1); it lasts
/// as long as the visit.
public enum RoomRole: String, Sendable, Hashable, CaseIterable {
    case moderator, participant, visitor, none
}

/// An occupant's lasting standing in a room (XEP-0045 §5.2), kept by the
/// room for the user's bare JID.
public enum RoomAffiliation: String, Sendable, Hashable, CaseIterable {
    case owner, admin, member, outcast, none
}

/// Someone in a room, as the room's presence describes them.
public struct RoomOccupant: Sendable, Hashable {
    /// The occupant's room address, `room@service/nick`.
    public var address: JID
    /// What they may do now.
    public var role: RoomRole
    /// Their standing in the room.
    public var affiliation: RoomAffiliation
    /// Their real JID, when the room shows it to us (to moderators in a
    /// semi-anonymous room, to everyone in a non-anonymous one).
    public var jid: JID?
    /// Their presence in the room.
    public var availability: Availability
    /// Their status text, if any.
    public var status: String?

    /// An occupant as described by its parts.
    public init(
        address: JID, role: RoomRole, affiliation: RoomAffiliation, jid: JID? = nil,
        availability: Availability = .available, status: String? = nil
    ) {
        self.address = address
        self.role = role
        self.affiliation = affiliation
        self.jid = jid
        self.availability = availability
        self.status = status
    }

    /// The room's bare JID.
    public var room: JID { address.bare }
    /// The nickname: the resource of the room address.
    public var nick: String { address.resourcepart ?? "" }
}
