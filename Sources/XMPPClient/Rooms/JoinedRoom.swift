import Foundation
import XMPPCore

/// What the client keeps of a room it is in or joining: enough to join it
/// again in a new session, and what the room told about itself.
struct JoinedRoom: Sendable {
    /// Our nickname.
    var nick: String
    /// The password we joined with.
    var password: String?
    /// The history to ask for at the next join.
    var history: RoomHistoryRequest
    /// Whether the room sent our own presence in this session.
    var isJoined = false
    /// The occupants, ourselves included, by nickname.
    var occupants: [String: RoomOccupant] = [:]
    /// The subject; `nil` until the room sent it.
    var subject: String?
    /// When the newest message we saw was sent, so that a rejoin asks only
    /// for what came after it.
    var newestMessage: Date?

    /// The state after a new session: out of the room, asking for what
    /// was said since the newest message seen.
    var forRejoining: JoinedRoom {
        var state = JoinedRoom(nick: nick, password: password, history: history)
        state.newestMessage = newestMessage
        if let newestMessage { state.history = RoomHistoryRequest(since: newestMessage) }
        return state
    }

    /// The join request (XEP-0045 §7.2.1) with `presence` as our presence
    /// in the room: addressed to `room/nick`, with the history request and
    /// the password in `<x xmlns='…muc'/>`.
    func joinRequest(to room: JID, presence: Presence) -> Element? {
        guard let address = try? room.withResource(nick) else { return nil }
        var element = presence.element
        element[attribute: "to"] = address.description
        var x = Element("x", namespace: NS.muc)
        if let history = history.element { x.append(history) }
        if let password { x.append(Element("password", namespace: NS.muc, children: [.text(password)])) }
        element.append(x)
        return element
    }
}

/// A join, nickname change or exit waiting for the room's answer: our own
/// presence from the room (status 110) or an error.
struct RoomWaiter {
    /// What the request asked for.
    enum Goal {
        case join, nickChange, leave
    }

    let goal: Goal
    let waiter: CheckedContinuation<OccupantPresence, any Error>
    let deadline: Task<Void, Never>
}
