/// The presence subscription between a user and one contact, as the user's
/// server keeps it (RFC 6121 §3, Appendix A.1).
///
/// `subscription` is what the roster shows; the pending flags are the
/// requests not yet answered. Of the sixteen combinations only the nine
/// states of Appendix A.1 occur: a pending request never coexists with the
/// direction it asks for.
public struct SubscriptionState: Sendable, Hashable {
    /// The `subscription` attribute of a roster item (RFC 6121 §2.1.2.5).
    public enum Subscription: String, Sendable, Hashable, CaseIterable {
        /// Neither sees the other's presence.
        case none
        /// The user sees the contact's presence.
        case to
        /// The contact sees the user's presence.
        case from
        /// Both see each other's presence.
        case both
    }

    /// What the roster item says.
    public var subscription: Subscription

    /// Whether the contact sees the user's presence (`from` or `both`):
    /// the contacts a user's presence, and PEP events (XEP-0163 §2.4), go to.
    public var sharesPresence: Bool { subscription == .from || subscription == .both }

    /// The user asked to see the contact's presence and the contact has not
    /// answered: the roster item carries `ask='subscribe'` ("Pending Out").
    public var pendingOut: Bool
    /// The contact asked to see the user's presence and the user has not
    /// answered ("Pending In"); the request is redelivered at each login.
    public var pendingIn: Bool
    /// The user approved the contact's subscription before it asked
    /// (RFC 6121 §3.4); only meaningful without `from`.
    public var preApproved: Bool

    /// Creates a state; the default is "None".
    public init(
        _ subscription: Subscription = .none, pendingOut: Bool = false, pendingIn: Bool = false,
        preApproved: Bool = false
    ) {
        self.subscription = subscription
        self.pendingOut = pendingOut
        self.pendingIn = pendingIn
        self.preApproved = preApproved
    }
}
