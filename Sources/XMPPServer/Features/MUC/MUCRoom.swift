import XMPPCore

/// A stanza a room sends, and to whom: a joined resource, or a user's
/// bare JID (each of its available resources gets it). Copies for many
/// recipients share one element; `MultiUserChat.send` sets each copy's
/// `to` once the rooms' lock is released.
struct MUCDelivery: Sendable {
    var to: JID
    var element: Element
    /// Whether a groupchat message's body names the recipient's nickname
    /// (a mention, which wakes a suspended app: `GroupChatMention`).
    var mentionsRecipient = false
}

/// What a room keeps of a user it has an affiliation with (XEP-0045
/// §5.2): the affiliation, the nickname the user registered (§7.10), and
/// the reason given when it was set (shown in lists, as for a ban).
struct MUCAffiliationRecord: Sendable, Equatable, Codable {
    var affiliation: MUCAffiliation
    var nick: String?
    var reason: String?
}

/// One room (XEP-0045): its settings, affiliations, occupants by
/// nickname, subject and history. A value kept by `MUCRooms` under its
/// lock; each change returns the stanzas it causes, which the caller
/// sends once the lock is released.
struct MUCRoom: Sendable {
    /// The room's bare address, `room@conference.localhost`.
    let jid: JID
    /// The user who created it, who counts it against
    /// `muc_max_rooms_per_user`.
    let creator: JID
    var configuration: MUCRoomConfiguration
    /// Affiliations other than `none`, by bare JID (or a domain, for a
    /// ban of all its users).
    var affiliations: [JID: MUCAffiliationRecord] = [:]
    /// A new room is locked until its owner configures it or accepts the
    /// defaults (§10.1.1): no one else may enter.
    var isLocked = false
    /// The occupants by nickname.
    var occupants: [String: MUCOccupant] = [:]
    /// The nickname of each joined resource.
    var nicks: [JID: String] = [:]
    /// The last subject change (`from` the occupant who made it, without
    /// `to`), or nil while the room has none.
    var subject: Element?
    var history: MUCHistory
    /// Counts the changes of what storage keeps of a persistent room
    /// (settings, affiliations, subject), for `MUCRooms` to notice them.
    var revision = 0
    /// Set once an owner destroyed the room (§10.9).
    var isDestroyed = false
    /// Where its occupant ids come from (XEP-0421).
    let occupantIDs: MUCOccupantIDs

    /// An empty room at `jid` with `configuration`, owned by `creator`.
    init(jid: JID, creator: JID, configuration: MUCRoomConfiguration, occupantIDs: MUCOccupantIDs) {
        self.jid = jid
        self.creator = creator
        self.configuration = configuration
        self.history = MUCHistory(capacity: configuration.historyLength)
        self.occupantIDs = occupantIDs
        affiliations[creator] = MUCAffiliationRecord(affiliation: .owner)
    }

    /// Whether the room archives its messages (XEP-0313 §6,
    /// `muc#roomconfig_enablearchiving`).
    var archives: Bool { configuration.archived }

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

    /// The occupant that `user` (any JID of it) is, if it is in the room.
    func occupant(of user: JID) -> MUCOccupant? {
        let bare = user.bare
        return occupants.values.first { $0.user == bare }
    }

    /// `user`'s affiliation: its own, or `outcast` when its whole domain
    /// is banned (§9.1).
    func affiliation(of user: JID) -> MUCAffiliation {
        if let own = affiliations[user.bare]?.affiliation { return own }
        if let domain = try? JID(localpart: nil, domainpart: user.domainpart), affiliations[domain]?.affiliation == .outcast {
            return .outcast
        }
        return .none
    }

    /// The role an occupant with `affiliation` starts with (§5.1.1):
    /// owners and admins moderate, members take part, others take part
    /// unless the room is moderated; `none` means it may not be in.
    func defaultRole(for affiliation: MUCAffiliation) -> MUCRole {
        switch affiliation {
        case .owner, .admin: .moderator
        case .member: .participant
        case .none: configuration.membersOnly ? .none : configuration.moderated ? .visitor : .participant
        case .outcast: .none
        }
    }

    /// `element` sent to every joined resource of every occupant.
    func toEveryone(_ element: Element) -> [MUCDelivery] {
        nicks.keys.map { MUCDelivery(to: $0, element: element) }
    }

    /// `element` sent to every joined resource whose occupant sees real
    /// JIDs (moderators, or everyone in a non-anonymous room).
    func toThoseWhoSeeJIDs(_ element: Element) -> [MUCDelivery] {
        nicks.keys.filter(seesJIDs).map { MUCDelivery(to: $0, element: element) }
    }

    /// Whether the resource `recipient` joined as an occupant who sees
    /// real JIDs: a moderator, or anyone in a non-anonymous room (§4.2).
    func seesJIDs(_ recipient: JID) -> Bool {
        configuration.isNonAnonymous || occupant(joinedFrom: recipient)?.role == .moderator
    }
}
