// RFC 6121 §3 and Appendix A.2/A.3: what the user's server does with each
// presence subscription stanza, as pure functions of the stored state.
//
// "Outbound" stanzas come from the user and go to the contact; "inbound" ones
// come from the contact to the user. The state is always the user's side:
// `to` means the user sees the contact, `pendingIn` means the contact asked.
// Each function follows the prose of §3, and the tests hold every row of the
// Appendix A tables against it.

extension SubscriptionState {
    /// Everything the server does about one subscription stanza.
    public struct Outcome: Sendable, Hashable {
        /// The state to store; the old one for "no state change".
        public let state: SubscriptionState
        /// Whether the stanza goes on: the "ROUTE?" column of Appendix A.2
        /// and the "DELIVER?" column of A.3.
        ///
        /// Outbound, the server stamps the user's bare JID on it and routes
        /// it to the contact. Inbound, it delivers it to the user's available
        /// resources; an inbound `subscribe` with none available stays
        /// recorded by `pendingIn` and is delivered whenever the user next
        /// becomes available, until answered (§3.1.3). When `false` the
        /// stanza is dropped without an error.
        public let forward: Bool
        /// Whether the roster item the user sees (its `subscription`, `ask`
        /// and `approved`) changed, so the server pushes it to the user's
        /// interested resources (RFC 6121 §2.1.6). A pending inbound request
        /// is not part of the item, so it never causes a push.
        public let rosterPush: Bool
        /// A presence the server itself sends to the contact from the user's
        /// bare JID. Only ever `subscribed`: the answer to a `subscribe` the
        /// user has already approved or pre-approved (§3.1.3, §3.4).
        public let autoReply: Presence.PresenceType?
        /// Presence the server sends to the contact from each of the user's
        /// available resources: `available` is their current presence, after
        /// an approval (§3.1.5); `unavailable` marks the end of the contact's
        /// subscription (§3.2.2, §3.3.3). `unavailable` goes before a
        /// forwarded `unsubscribed`, while the contact is still subscribed;
        /// `available` follows the `subscribed`.
        public let presenceToContact: Presence.PresenceType?

        init(
            state: SubscriptionState, forward: Bool, rosterPush: Bool,
            autoReply: Presence.PresenceType? = nil, presenceToContact: Presence.PresenceType? = nil
        ) {
            self.state = state
            self.forward = forward
            self.rosterPush = rosterPush
            self.autoReply = autoReply
            self.presenceToContact = presenceToContact
        }
    }

    // MARK: Outbound, from the user (Appendix A.2)

    /// The user asks to see the contact's presence (RFC 6121 §3.1.2, A.2.1).
    ///
    /// Routed in every state, since the contact's server may have lost its
    /// side; it becomes "Pending Out" unless the user already has `to`.
    public func outboundSubscribe() -> Outcome {
        var next = self
        if !subscription.includesTo { next.pendingOut = true }
        return outcome(next, forward: true)
    }

    /// The user stops seeing the contact's presence (RFC 6121 §3.3.2, A.2.2).
    ///
    /// Routed in every state; ends `to` and withdraws any pending request.
    public func outboundUnsubscribe() -> Outcome {
        outcome(withoutTo, forward: true)
    }

    /// The user lets the contact see the user's presence (RFC 6121 §3.1.5,
    /// §3.4.2, A.2.3).
    ///
    /// - With `from` already, nothing happens (A.2.3 "no").
    /// - With a pending request, it is approved: routed, `from` granted, and
    ///   the user's current presence sent to the contact (§3.1.5).
    /// - Otherwise it is a pre-approval (§3.4.2; Swiftlet supports it): noted
    ///   as `approved`, not routed, and the next `subscribe` from the contact
    ///   is answered by the server (see `inboundSubscribe()`).
    public func outboundSubscribed() -> Outcome {
        if subscription.includesFrom { return outcome(self, forward: false) }
        if pendingIn { return outcome(withFrom, forward: true, presenceToContact: .available) }
        var next = self
        next.preApproved = true
        return outcome(next, forward: false)
    }

    /// The user denies the contact's request, cancels the contact's
    /// subscription, or withdraws a pre-approval (RFC 6121 §3.2.2, §3.4,
    /// A.2.4).
    ///
    /// With `from` or a pending request it is routed, and ends both; ending
    /// `from` first sends `unavailable` from the user's resources (§3.2.2).
    /// Otherwise it is not routed and only clears a pre-approval. When the
    /// result is "None" and the item existed only to hold the request (A.1,
    /// "None + Pending In"), the server removes it.
    public func outboundUnsubscribed() -> Outcome {
        if subscription.includesFrom || pendingIn {
            let presence: Presence.PresenceType? = subscription.includesFrom ? .unavailable : nil
            return outcome(withoutFrom, forward: true, presenceToContact: presence)
        }
        var next = self
        next.preApproved = false
        return outcome(next, forward: false)
    }

    // MARK: Inbound, from the contact (Appendix A.3)

    /// The contact asks to see the user's presence (RFC 6121 §3.1.3, §3.4,
    /// A.3.1).
    ///
    /// - With `from` already, the server answers `subscribed` itself and does
    ///   not deliver (A.3.1 "no *", §3.1.3 "MUST auto-reply"). It also sends
    ///   the user's current presence, as after any approval: the contact has
    ///   evidently lost its side, and the RFC leaves this step open.
    /// - With a pre-approval, the server approves in the user's name: not
    ///   delivered, `from` granted, `subscribed` and current presence sent.
    /// - With a request already pending, the repeat is dropped.
    /// - Otherwise it is delivered (or kept for later) and becomes "Pending In".
    public func inboundSubscribe() -> Outcome {
        if subscription.includesFrom {
            return outcome(self, forward: false, autoReply: .subscribed, presenceToContact: .available)
        }
        if preApproved {
            return outcome(withFrom, forward: false, autoReply: .subscribed, presenceToContact: .available)
        }
        if pendingIn { return outcome(self, forward: false) }
        var next = self
        next.pendingIn = true
        return outcome(next, forward: true)
    }

    /// The contact stops seeing the user's presence or withdraws its request
    /// (RFC 6121 §3.3.3, A.3.2).
    ///
    /// With `from` or a pending request it is delivered and ends both; ending
    /// `from` sends `unavailable` from the user's resources to the contact
    /// (§3.3.3). Otherwise it is dropped. When the result is "None" and the
    /// item existed only to hold the request, the server removes it.
    public func inboundUnsubscribe() -> Outcome {
        guard subscription.includesFrom || pendingIn else { return outcome(self, forward: false) }
        let presence: Presence.PresenceType? = subscription.includesFrom ? .unavailable : nil
        return outcome(withoutFrom, forward: true, presenceToContact: presence)
    }

    /// The contact approves the user's request (RFC 6121 §3.1.6, A.3.3).
    ///
    /// Delivered and grants `to` only while the user's request is pending;
    /// an approval nobody asked for is dropped. The contact's presence that
    /// follows comes from the contact's server.
    public func inboundSubscribed() -> Outcome {
        guard pendingOut else { return outcome(self, forward: false) }
        var next = self
        next.pendingOut = false
        next.subscription = Subscription(to: true, from: subscription.includesFrom)
        return outcome(next, forward: true)
    }

    /// The contact denies the user's request or cancels the user's
    /// subscription (RFC 6121 §3.2.3, A.3.4).
    ///
    /// With `to` or a pending request it is delivered and ends both;
    /// otherwise it is dropped.
    public func inboundUnsubscribed() -> Outcome {
        guard subscription.includesTo || pendingOut else { return outcome(self, forward: false) }
        return outcome(withoutTo, forward: true)
    }

    // MARK: Helpers

    /// The contact sees the user's presence; its request and any
    /// pre-approval are used up.
    private var withFrom: SubscriptionState {
        SubscriptionState(
            Subscription(to: subscription.includesTo, from: true), pendingOut: pendingOut)
    }

    /// The contact neither sees the user's presence nor asks to.
    private var withoutFrom: SubscriptionState {
        var next = self
        next.pendingIn = false
        next.subscription = Subscription(to: subscription.includesTo, from: false)
        return next
    }

    /// The user neither sees the contact's presence nor asks to.
    private var withoutTo: SubscriptionState {
        var next = self
        next.pendingOut = false
        next.subscription = Subscription(to: false, from: subscription.includesFrom)
        return next
    }

    /// An outcome moving to `next`, with a roster push when the item the
    /// user sees differs.
    private func outcome(
        _ next: SubscriptionState, forward: Bool, autoReply: Presence.PresenceType? = nil,
        presenceToContact: Presence.PresenceType? = nil
    ) -> Outcome {
        let itemChanged =
            next.subscription != subscription || next.pendingOut != pendingOut
            || next.preApproved != preApproved
        return Outcome(
            state: next, forward: forward, rosterPush: itemChanged, autoReply: autoReply,
            presenceToContact: presenceToContact)
    }
}
