import XMPPCore

/// One occupant of a room (XEP-0045 §5): a nickname held by one user,
/// joined from one or more of that user's resources.
struct MUCOccupant: Sendable {
    /// What the occupant may do in the room (§5.1). Only these two are
    /// given for now: the room's creator moderates, everyone else takes
    /// part.
    enum Role: String, Sendable {
        case moderator, participant
    }

    /// The occupant's long-lived standing in the room (§5.2): its creator
    /// owns it; no one else has one yet.
    enum Affiliation: String, Sendable {
        case owner, none
    }

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
    var role: Role
    var affiliation: Affiliation
}
