import XMPPCore

/// What one presence from a room says about one occupant, read without
/// any state (XEP-0045 §7.2.3): who, with which role and affiliation, the
/// status codes (§15.6), the new nickname of a change (303), and why an
/// unavailable one went.
struct OccupantPresence: Sendable, Hashable {
    /// The occupant as the presence shows them.
    var occupant: RoomOccupant
    /// Whether they are in the room (false for `unavailable`).
    var isAvailable: Bool
    /// The `<status code/>` values.
    var statusCodes: Set<Int>
    /// With 303, the nickname the occupant changed to.
    var newNick: String?
    /// The `<reason/>` of the item: why someone was kicked or banned.
    var reason: String?
    /// The room's `<destroy/>` notice as an exit reason (`.destroyed`).
    var destruction: RoomExitReason?

    /// The status codes this client reads (XEP-0045 §15.6).
    enum Status {
        static let selfPresence = 110
        static let created = 201
        static let banned = 301
        static let nickChanged = 303
        static let kicked = 307
        static let affiliationChanged = 321
        static let membersOnly = 322
        static let shutdown = 332
    }

    /// Reads `presence` when it comes from an occupant's room address and
    /// carries `<x xmlns='…muc#user'><item/></x>`; `nil` otherwise.
    init?(_ presence: Presence) {
        guard let from = presence.from, from.resourcepart != nil,
            presence.type == .available || presence.type == .unavailable,
            let x = presence.element.child("x", namespace: NS.mucUser),
            let item = x.child("item", namespace: NS.mucUser)
        else { return nil }
        isAvailable = presence.type == .available
        occupant = RoomOccupant(
            address: from,
            role: item[attribute: "role"].flatMap(RoomRole.init(rawValue:)) ?? .none,
            affiliation: item[attribute: "affiliation"].flatMap(RoomAffiliation.init(rawValue:)) ?? .none,
            jid: item[attribute: "jid"].flatMap { try? JID($0) },
            availability: isAvailable
                ? presence.show.flatMap { Availability(rawValue: $0.rawValue) } ?? .available : .unavailable,
            status: presence.status)
        statusCodes = Set(
            x.elements.filter { $0.name == "status" && $0.namespace == NS.mucUser }
                .compactMap { $0[attribute: "code"].flatMap(Int.init) })
        newNick = item[attribute: "nick"]
        reason = item.childText("reason", namespace: NS.mucUser)
        destruction = x.child("destroy", namespace: NS.mucUser).map { destroy in
            .destroyed(
                reason: destroy.childText("reason", namespace: NS.mucUser),
                alternate: destroy[attribute: "jid"].flatMap { try? JID($0) })
        }
    }

    /// Whether the presence is about us (110).
    var isSelf: Bool { statusCodes.contains(Status.selfPresence) }

    /// Whether it is a nickname change: an unavailable presence with 303
    /// and the new nickname.
    var isNickChange: Bool {
        !isAvailable && statusCodes.contains(Status.nickChanged) && newNick != nil
    }

    /// Why an unavailable occupant went: the room's destruction, else the
    /// strongest status code, else by choice.
    var exitReason: RoomExitReason {
        if let destruction { return destruction }
        if statusCodes.contains(Status.banned) { return .banned(reason: reason) }
        if statusCodes.contains(Status.kicked) { return .kicked(reason: reason) }
        if statusCodes.contains(Status.affiliationChanged) { return .affiliationChanged }
        if statusCodes.contains(Status.membersOnly) { return .membersOnly }
        if statusCodes.contains(Status.shutdown) { return .shutdown }
        return .left
    }

    /// The event this presence means, given whether the occupant was
    /// already known (for our own presence: whether we were already in).
    func event(knownBefore: Bool) -> RoomEvent {
        let room = occupant.room
        if isNickChange, let newNick {
            return .nickChanged(room: room, from: occupant.nick, to: newNick, isSelf: isSelf)
        }
        if !isAvailable {
            return isSelf ? .left(room: room, reason: exitReason) : .occupantLeft(occupant, reason: exitReason)
        }
        if knownBefore { return .occupantChanged(occupant) }
        if isSelf {
            return .joined(room: room, nick: occupant.nick, created: statusCodes.contains(Status.created))
        }
        return .occupantJoined(occupant)
    }
}
