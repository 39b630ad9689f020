import XMPPCore

/// What an occupant may do in a room (XEP-0045 §5.1), lowest first: it
/// lasts as long as the occupant is in the room.
enum MUCRole: String, Sendable, Comparable, Codable, CaseIterable {
    case none, visitor, participant, moderator

    /// The rank, for "at least" checks.
    private var rank: Int {
        switch self {
        case .none: 0
        case .visitor: 1
        case .participant: 2
        case .moderator: 3
        }
    }

    static func < (lhs: MUCRole, rhs: MUCRole) -> Bool { lhs.rank < rhs.rank }
}

/// A user's long-lived standing in a room (XEP-0045 §5.2), lowest first:
/// kept by bare JID (or a whole domain, for a ban) whether or not the
/// user is in the room.
enum MUCAffiliation: String, Sendable, Comparable, Codable {
    case outcast, none, member, admin, owner

    /// The rank, for "at least" checks.
    private var rank: Int {
        switch self {
        case .outcast: 0
        case .none: 1
        case .member: 2
        case .admin: 3
        case .owner: 4
        }
    }

    static func < (lhs: MUCAffiliation, rhs: MUCAffiliation) -> Bool { lhs.rank < rhs.rank }
}

/// One occupant of a room (XEP-0045 §5): a nickname held by one user,
/// joined from one or more of that user's resources.
struct MUCOccupant: Sendable {
    /// The nickname, the resource of the occupant's address in the room.
    var nick: String
    /// The user behind it.
    var user: JID
    /// The user's resources that joined under this nickname, in the
    /// order they joined; each gets the room's presence and messages.
    var resources: [JID]
    /// The last available presence the occupant sent the room, as it
    /// sent it (its `<x xmlns='…muc'/>` removed): what the others see.
    var presence: Element
    var role: MUCRole
    var affiliation: MUCAffiliation
}
