/// The states of RFC 6121 Appendix A.1, by their RFC names.
extension SubscriptionState {
    /// "None": neither is subscribed and neither has asked.
    public static let none = SubscriptionState(.none)
    /// "None + Pending Out": the user asked the contact (`ask='subscribe'`).
    public static let nonePendingOut = SubscriptionState(.none, pendingOut: true)
    /// "None + Pending In": the contact asked the user. Only a roster item if
    /// the user made one; otherwise the server just keeps the request.
    public static let nonePendingIn = SubscriptionState(.none, pendingIn: true)
    /// "None + Pending Out+In": both asked, neither answered.
    public static let nonePendingOutIn = SubscriptionState(.none, pendingOut: true, pendingIn: true)
    /// "To": the user sees the contact's presence.
    public static let to = SubscriptionState(.to)
    /// "To + Pending In": the user sees the contact's presence and the
    /// contact asked to see the user's.
    public static let toPendingIn = SubscriptionState(.to, pendingIn: true)
    /// "From": the contact sees the user's presence.
    public static let from = SubscriptionState(.from)
    /// "From + Pending Out": the contact sees the user's presence and the
    /// user asked to see the contact's.
    public static let fromPendingOut = SubscriptionState(.from, pendingOut: true)
    /// "Both": each sees the other's presence.
    public static let both = SubscriptionState(.both)

    /// The nine states of RFC 6121 Appendix A.1, in the RFC's order.
    public static let definedStates: [SubscriptionState] = [
        .none, .nonePendingOut, .nonePendingIn, .nonePendingOutIn,
        .to, .toPendingIn, .from, .fromPendingOut, .both,
    ]

    /// Whether the state can occur: one of the nine of Appendix A.1, or a
    /// pre-approved "None", "None + Pending Out" or "To" (RFC 6121 §3.4).
    ///
    /// A request is never pending for a direction already granted, and a
    /// pre-approval exists only where the contact has neither `from` nor a
    /// pending request: §3.4.2 ignores a pre-approval in the `from` states and
    /// treats it as an ordinary approval when a request is pending.
    public var isValid: Bool {
        if pendingOut && subscription.includesTo { return false }
        if pendingIn && subscription.includesFrom { return false }
        if preApproved && (pendingIn || subscription.includesFrom) { return false }
        return true
    }
}

extension SubscriptionState: CustomStringConvertible {
    /// The RFC's name for the state ("None + Pending Out+In"), with
    /// " (pre-approved)" appended for a noted pre-approval.
    public var description: String {
        var name = subscription.rawValue.prefix(1).uppercased() + subscription.rawValue.dropFirst()
        switch (pendingOut, pendingIn) {
        case (true, true): name += " + Pending Out+In"
        case (true, false): name += " + Pending Out"
        case (false, true): name += " + Pending In"
        case (false, false): break
        }
        return preApproved ? name + " (pre-approved)" : name
    }
}

extension SubscriptionState.Subscription {
    /// The subscription made of its two directions.
    ///
    /// - Parameters:
    ///   - to: The user sees the contact's presence.
    ///   - from: The contact sees the user's presence.
    public init(to: Bool, from: Bool) {
        switch (to, from) {
        case (false, false): self = .none
        case (true, false): self = .to
        case (false, true): self = .from
        case (true, true): self = .both
        }
    }

    /// The user sees the contact's presence (`to` or `both`).
    public var includesTo: Bool { self == .to || self == .both }

    /// The contact sees the user's presence (`from` or `both`).
    public var includesFrom: Bool { self == .from || self == .both }
}
