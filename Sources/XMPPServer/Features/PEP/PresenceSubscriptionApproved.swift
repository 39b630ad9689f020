import XMPPCore

/// `contact` may now see the presence of `user`: `user` approved its
/// subscription (RFC 6121 §3.1.5), and `user`'s current presence has
/// gone to it. PEP observes it to send the contact's resources the last
/// items of `user`'s nodes at once (XEP-0163 §4.3.4), not only when they
/// next become available.
public struct PresenceSubscriptionApproved: ServerEvent {
    /// The user who approved (a bare JID).
    public let user: JID
    /// The contact now subscribed to the user's presence (a bare JID).
    public let contact: JID
    /// The server it happened on.
    public let server: ServerContext

    /// An event from its parts.
    public init(user: JID, contact: JID, server: ServerContext) {
        self.user = user
        self.contact = contact
        self.server = server
    }
}
