import XMPPCore

/// An invitation into a room: mediated by the room (XEP-0045 §7.8.2) or
/// sent directly by the inviter (XEP-0249).
public struct RoomInvitation: Sendable, Hashable {
    /// The room's bare JID.
    public var room: JID
    /// Who invites us, when known.
    public var inviter: JID?
    /// Their words, if any.
    public var reason: String?
    /// The room's password, if the invitation carries it.
    public var password: String?
    /// Whether the inviter sent it directly (XEP-0249) rather than through
    /// the room.
    public var isDirect: Bool

    /// An invitation as described by its parts.
    public init(room: JID, inviter: JID?, reason: String? = nil, password: String? = nil, isDirect: Bool) {
        self.room = room.bare
        self.inviter = inviter
        self.reason = reason
        self.password = password
        self.isDirect = isDirect
    }
}

extension RoomInvitation {
    /// Reads the invitation `message` carries: a room's `<x xmlns='…muc#user'><invite/></x>`
    /// from the room's bare JID (XEP-0045 §7.8.2), or an inviter's
    /// `<x xmlns='jabber:x:conference' jid/>` (XEP-0249 §2); `nil` when
    /// it carries none.
    init?(_ message: Message) {
        guard let from = message.from else { return nil }
        if from.isBare, let x = message.element.child("x", namespace: NS.mucUser),
            let invite = x.child("invite", namespace: NS.mucUser)
        {
            self.init(
                room: from, inviter: invite[attribute: "from"].flatMap { try? JID($0) },
                reason: invite.childText("reason", namespace: NS.mucUser),
                password: x.childText("password", namespace: NS.mucUser), isDirect: false)
            return
        }
        guard let x = message.element.child("x", namespace: NS.conferenceInvitation),
            let room = x[attribute: "jid"].flatMap({ try? JID($0) })
        else { return nil }
        self.init(
            room: room, inviter: from, reason: x[attribute: "reason"], password: x[attribute: "password"],
            isDirect: true)
    }

    /// The direct invitation's `<x/>` (XEP-0249 §2).
    var directElement: Element {
        var x = Element("x", namespace: NS.conferenceInvitation, attributes: ["jid": room.description])
        if let reason { x[attribute: "reason"] = reason }
        if let password { x[attribute: "password"] = password }
        return x
    }
}
