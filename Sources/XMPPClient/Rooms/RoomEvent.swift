import Foundation
import XMPPCore

/// Something that happened in a room we are in, or an invitation to one.
public enum RoomEvent: Sendable, Hashable {
    /// We are in `room` as `nick`: the room sent our own presence (status
    /// 110); `created` when our join created it (201) and it waits for
    /// its owner's configuration.
    case joined(room: JID, nick: String, created: Bool)
    /// A join that no one waited for (an autojoin or a rejoin after a new
    /// session) was refused.
    case joinFailed(room: JID, error: XMPPClientError)
    /// We are no longer in `room`.
    case left(room: JID, reason: RoomExitReason)
    /// Someone else came in.
    case occupantJoined(RoomOccupant)
    /// Someone's presence, role or affiliation changed (ours included).
    case occupantChanged(RoomOccupant)
    /// Someone else went out.
    case occupantLeft(RoomOccupant, reason: RoomExitReason)
    /// The occupant called `from` is now called `to`; `isSelf` when that
    /// is us.
    case nickChanged(room: JID, from: String, to: String, isSelf: Bool)
    /// A message to everyone in the room, or a private one through it.
    case message(RoomMessage)
    /// The subject changed, or is the one a join is told; "" for none.
    /// `nick` is who set it, when the room says.
    case subject(room: JID, subject: String, nick: String?)
    /// Someone invites us into a room.
    case invitation(RoomInvitation)
}

/// Why someone is no longer in a room: the status codes of their
/// unavailable presence (XEP-0045 §15.6) or the room's destruction (§10.9).
public enum RoomExitReason: Sendable, Hashable {
    /// They left (or their connection did).
    case left
    /// A moderator kicked them (307), with the reason if given.
    case kicked(reason: String?)
    /// An admin banned them (301), with the reason if given.
    case banned(reason: String?)
    /// Their affiliation changed so that they may not stay (321).
    case affiliationChanged
    /// The room became members-only and they are not a member (322).
    case membersOnly
    /// The service is shutting down (332).
    case shutdown
    /// An owner destroyed the room, with the reason and the room to go to
    /// instead, if given.
    case destroyed(reason: String?, alternate: JID?)
}

/// A message in a room: to everyone (`groupchat`), or private between two
/// occupants (XEP-0045 §7.5).
public struct RoomMessage: Sendable, Hashable {
    /// The stanza id (one the client made up when the sender gave none).
    public var id: String
    /// The room's bare JID.
    public var room: JID
    /// The sender's nickname; `nil` for the room itself.
    public var nick: String?
    /// The text.
    public var body: String
    /// When it was sent: the room's delay stamp for a message from its
    /// history, else the arrival time.
    public var timestamp: Date
    /// Whether it comes from the room's history (a delay stamp by the room).
    public var isDelayed: Bool
    /// Whether it is a private message to us rather than one to everyone.
    public var isPrivate: Bool
    /// Whether we sent it (the room echoes every groupchat message to its
    /// sender).
    public var isOwn: Bool

    /// A message as described by its parts.
    public init(
        id: String, room: JID, nick: String?, body: String, timestamp: Date, isDelayed: Bool = false,
        isPrivate: Bool = false, isOwn: Bool = false
    ) {
        self.id = id
        self.room = room.bare
        self.nick = nick
        self.body = body
        self.timestamp = timestamp
        self.isDelayed = isDelayed
        self.isPrivate = isPrivate
        self.isOwn = isOwn
    }
}
