import XMPPCore
import XMPPStorage

/// RFC 6121 §3: presence subscriptions between users of this server.
///
/// A subscription stanza from user A to contact B is processed twice, in
/// one storage job so that both rosters change together: outbound on A's
/// item for B (Appendix A.2), then, if it is routed, inbound on B's item
/// for A (A.3). The job returns a `Plan` of what to send, in order; the
/// loop sends it. The state machine itself is `SubscriptionState`'s
/// transitions.
///
/// It also sends the requests still unanswered at the user's next initial
/// presence (§3.1.3), cancels the subscriptions of a removed roster item
/// (§2.5.2), and tells the contacts of a deleted account as if it had
/// cancelled every subscription.
public struct Subscriptions: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        // §3.4: pre-approvals are honoured.
        hooks.streamFeature { session in
            session.phase == .authenticated ? Element("sub", namespace: NS.preApproval) : nil
        }
        hooks.onPresence([.subscription]) { presence in
            Self.handle(presence)
            return .handled
        }
        hooks.on(InitialPresence.self, priority: 10, Self.sendPendingRequests)
        hooks.on(RosterItemRemoved.self) { removal in
            Self.cancelBothWays(removal.state, between: removal.owner, and: removal.contact, server: removal.server)
        }
        hooks.on(AccountDeleted.self) { deletion in
            for entry in deletion.deleted.rosterEntries {
                Self.tellContact(entry, accountDeleted: deletion.account, server: deletion.server)
            }
        }
    }

    /// One thing to send once the rosters are stored.
    enum Action: Sendable {
        /// A roster push of `item` at `version` to `owner`'s interested resources.
        case push(owner: JID, item: Element, version: Int)
        /// A subscription stanza for a user (bare JID): a `subscribe` goes to
        /// every available resource (§3.1.3), the others to the interested
        /// ones (§3.1.6, §3.2.3, §3.3.3).
        case deliver(to: JID, stanza: Element, type: Presence.PresenceType)
        /// The current presence (or unavailable) of every available
        /// resource of `from`, to `to` (§3.1.5, §3.2.2).
        case presence(from: JID, to: JID, type: Presence.PresenceType)
        /// A presence stanza from `from` for the available resources of a user.
        case notify(from: JID, to: JID, stanza: Element)
        /// `contact` may now see `user`'s presence: `PresenceSubscriptionApproved`.
        case approved(user: JID, contact: JID)
    }

    /// The actions of one subscription change, in the order they are sent.
    struct Plan: Sendable {
        var actions: [Action] = []
    }

    /// Handles a subscription stanza (`subscribe`, `subscribed`,
    /// `unsubscribe`, `unsubscribed`) that a user sent to a contact.
    private static func handle(_ routed: RoutedPresence) {
        let session = routed.session
        guard let user = session.jid?.bare, let contact = routed.recipient, let type = routed.presence.type else { return }
        let stanza = routed.presence.element
        let server = session.server
        // §3.1.2: routed with the user's bare JID, to the contact's bare JID.
        var outbound = stanza
        outbound[attribute: "from"] = user.description
        outbound[attribute: "to"] = contact.bare.description
        let sent = outbound
        session.withStorage({ stores in
            var plan = Plan()
            try process(type, sent, from: user, to: contact.bare, stores: stores, plan: &plan)
            return plan
        }) { result in
            switch result {
            case .success(let plan): carryOut(plan, server: server)
            case .failure(let error): session.log.error("subscription change failed: \(error)")
            }
        }
    }

    /// RFC 6121 §2.5.2: removing a roster item cancels the subscriptions
    /// both ways, as `unsubscribe` and `unsubscribed` from the owner.
    private static func cancelBothWays(_ state: SubscriptionState, between owner: JID, and contact: JID, server: ServerContext) {
        var types: [Presence.PresenceType] = []
        if state.subscription == .to || state.subscription == .both || state.pendingOut { types.append(.unsubscribe) }
        if state.subscription == .from || state.subscription == .both || state.pendingIn { types.append(.unsubscribed) }
        guard !types.isEmpty else { return }
        let cancellations = types
        server.storage.run(on: server.loop, { stores in
            var plan = Plan()
            for type in cancellations {
                if type == .unsubscribed {
                    // §3.2.2: ending the contact's subscription first sends it
                    // unavailable presence from the owner's resources.
                    plan.actions.append(.presence(from: owner, to: contact, type: .unavailable))
                }
                let stanza = Element(
                    "presence", namespace: NS.client,
                    attributes: ["type": type.rawValue, "from": owner.description, "to": contact.description])
                try deliverInbound(type, stanza, from: owner, to: contact, stores: stores, plan: &plan)
            }
            return plan
        }) { result in
            if case .success(let plan) = result { carryOut(plan, server: server) }
        }
    }

    // MARK: - Storage side (runs on the storage thread)

    /// Outbound processing at the user, then inbound at the contact.
    private static func process(
        _ type: Presence.PresenceType, _ stanza: Element, from user: JID, to contact: JID, stores: Stores,
        plan: inout Plan
    ) throws {
        var item = try entry(for: contact, of: user, in: stores)
        let outcome = outbound(type, item.state)
        // §3.1.2, §3.1.5, §3.4.2: asking, approving or pre-approving puts
        // the contact in the roster (approving a request from a contact not
        // in it yet: A.2.2 "None + Pending In" becomes "From", pushed).
        if type == .subscribe || type == .subscribed { item.inRoster = true }
        try store(&item, outcome, owner: user, stores: stores, plan: &plan)
        if outcome.presenceToContact == .unavailable {
            plan.actions.append(.presence(from: user, to: contact, type: .unavailable))
        }
        // XEP-0191 §3.3: a contact who blocks the user never sees the
        // stanza; the user's side changed as for any unanswered request.
        if outcome.forward, let username = contact.localpart, try !stores.blocks(user, by: username) {
            try deliverInbound(type, stanza, from: user, to: contact, stores: stores, plan: &plan)
        }
        if outcome.presenceToContact == .available {
            plan.actions.append(.presence(from: user, to: contact, type: .available))
            plan.actions.append(.approved(user: user, contact: contact))
        }
        if type == .subscribed, outcome.forward, outcome.state.subscription.includesTo {
            // Having approved a contact it already follows, the user gets
            // the contact's current presence again, as a probe would fetch
            // it (Prosody does this; RFC 6121 leaves it open).
            plan.actions.append(.presence(from: contact, to: user, type: .available))
        }
    }

    /// Inbound processing of a stanza from `from` at local user `to`.
    private static func deliverInbound(
        _ type: Presence.PresenceType, _ stanza: Element, from sender: JID, to user: JID, stores: Stores,
        plan: inout Plan
    ) throws {
        guard let username = user.localpart, try stores.accounts.accountExists(username) else {
            // No such account: a request is refused as if the user had
            // declined it (RFC 6121 §3.1.3: the contact's server answers).
            if type == .subscribe {
                let refusal = presence(.unsubscribed, from: user, to: sender)
                try deliverInboundToExisting(.unsubscribed, refusal, from: user, to: sender, stores: stores, plan: &plan)
            }
            return
        }
        try deliverInboundToExisting(type, stanza, from: sender, to: user, stores: stores, plan: &plan)
    }

    /// The largest subscription request kept for redelivery as it came;
    /// the user's roster, requests included, is read on every broadcast
    /// presence, so a request with a large status is kept without it.
    static let maxStoredRequestSize = 16 << 10

    /// `stanza` serialized for redelivery at login (RFC 6121 §3.1.3), or a
    /// bare `subscribe` when it is larger than `maxStoredRequestSize`.
    private static func storedRequest(_ stanza: Element, from sender: JID, to user: JID) -> String? {
        if let serialized = StoredStanza.serialize(stanza), serialized.utf8.count <= maxStoredRequestSize {
            return serialized
        }
        return StoredStanza.serialize(presence(.subscribe, from: sender, to: user))
    }

    private static func deliverInboundToExisting(
        _ type: Presence.PresenceType, _ stanza: Element, from sender: JID, to user: JID, stores: Stores,
        plan: inout Plan
    ) throws {
        var item = try entry(for: sender, of: user, in: stores)
        let outcome = inbound(type, item.state)
        if type == .subscribe, outcome.state.pendingIn {
            item.pendingInRequest = storedRequest(stanza, from: sender, to: user)
        }
        if !outcome.state.pendingIn { item.pendingInRequest = nil }
        // The stanza reaches the user before the roster push it causes, as
        // Prosody orders them (its scansion script presence_preapproval).
        if outcome.forward { plan.actions.append(.deliver(to: user, stanza: stanza, type: type)) }
        if type == .subscribe, outcome.forward {
            // Receipt of a new request is acknowledged with unavailable
            // presence from the user's bare JID: the requester does not see
            // the user until approved. RFC 6121 §3.1.3 leaves this open;
            // Prosody does it, and its issue1121 script expects it.
            plan.actions.append(.notify(from: user, to: sender, stanza: presence(.unavailable, from: user, to: sender)))
        }
        try store(&item, outcome, owner: user, stores: stores, plan: &plan)
        if outcome.presenceToContact == .unavailable {
            plan.actions.append(.presence(from: user, to: sender, type: .unavailable))
        }
        if outcome.autoReply == .subscribed {
            // The user approved earlier: the server answers in its name, and
            // the approval reaches the sender like any `subscribed`.
            let reply = presence(.subscribed, from: user, to: sender)
            try deliverInboundToExisting(.subscribed, reply, from: user, to: sender, stores: stores, plan: &plan)
        }
        if outcome.presenceToContact == .available {
            plan.actions.append(.presence(from: user, to: sender, type: .available))
            plan.actions.append(.approved(user: user, contact: sender))
        }
    }

    /// `owner`'s entry for `contact`, or a fresh hidden one in state "None".
    private static func entry(for contact: JID, of owner: JID, in stores: Stores) throws -> RosterItem {
        try stores.roster.item(contact.description, of: owner.localpart!)
            ?? RosterItem(contact: contact.description, inRoster: false)
    }

    /// Stores `item` with the outcome's state (deleting an entry left with
    /// nothing to remember) and plans the push when the visible item changed.
    private static func store(
        _ item: inout RosterItem, _ outcome: SubscriptionState.Outcome, owner: JID, stores: Stores, plan: inout Plan
    ) throws {
        guard outcome.state != item.state || outcome.rosterPush else { return }
        item.state = outcome.state
        let username = owner.localpart!
        if !item.inRoster, item.state == SubscriptionState() {
            _ = try stores.roster.remove(item.contact, of: username)
            return
        }
        let version = try stores.roster.put(item, of: username)
        if outcome.rosterPush, item.inRoster {
            plan.actions.append(.push(owner: owner, item: item.element, version: version))
        }
    }

    private static func outbound(_ type: Presence.PresenceType, _ state: SubscriptionState) -> SubscriptionState.Outcome {
        switch type {
        case .subscribe: state.outboundSubscribe()
        case .subscribed: state.outboundSubscribed()
        case .unsubscribe: state.outboundUnsubscribe()
        default: state.outboundUnsubscribed()
        }
    }

    private static func inbound(_ type: Presence.PresenceType, _ state: SubscriptionState) -> SubscriptionState.Outcome {
        switch type {
        case .subscribe: state.inboundSubscribe()
        case .subscribed: state.inboundSubscribed()
        case .unsubscribe: state.inboundUnsubscribe()
        default: state.inboundUnsubscribed()
        }
    }

    /// After initial presence: the requests still unanswered (§3.1.3), but
    /// from contacts the user blocks or who block the user and are online
    /// (XEP-0191 §3.3).
    @Sendable private static func sendPendingRequests(_ login: InitialPresence) {
        let session = login.session
        guard let jid = session.jid else { return }
        for item in login.roster where item.state.pendingIn {
            guard let stored = item.pendingInRequest, let contact = try? JID(item.contact),
                session.server.blocklists.verdict(from: contact, to: jid) == .allowed
            else { continue }
            session.send(pendingRequest(stored, from: contact, to: jid, log: session.log))
        }
    }

    /// The unanswered subscription request of `contact` kept in `stored`.
    /// One that does not parse back (a damaged row) is logged and replaced
    /// by a plain request, so that the user can still answer it, which
    /// clears it.
    private static func pendingRequest(_ stored: String, from contact: JID, to user: JID, log: Logger) -> Element {
        if let request = StoredStanza.parse(stored) { return request }
        log.error("the pending subscription request of \(contact) to \(user.bare) does not parse; sent without its content")
        return presence(.subscribe, from: contact, to: user.bare)
    }

    /// Pushes the removal of the deleted `account` to the owner of `entry`,
    /// and hands its available resources the `unsubscribe` (it no longer
    /// sees the owner, nor asks to) and `unsubscribed` (the owner no longer
    /// sees it) the account would have sent (§3.2, §3.3).
    private static func tellContact(_ entry: RemovedRosterEntry, accountDeleted account: JID, server: ServerContext) {
        guard let owner = try? JID(localpart: entry.owner, domainpart: server.domain) else { return }
        var removal = Element("item", namespace: NS.roster, attributes: ["jid": account.description])
        removal[attribute: "subscription"] = "remove"
        server.pushRosterItem(removal, version: entry.version, to: owner)
        let state = entry.item.state
        var kinds: [Presence.PresenceType] = []
        if state.subscription.includesFrom || state.pendingIn { kinds.append(.unsubscribe) }
        if state.subscription.includesTo || state.pendingOut { kinds.append(.unsubscribed) }
        for kind in kinds {
            let stanza = presence(kind, from: account, to: owner)
            for handle in server.sessions.availableSessions(of: owner) { handle.deliver(stanza) }
        }
    }

    private static func presence(_ type: Presence.PresenceType, from: JID, to: JID) -> Element {
        Element("presence", namespace: NS.client, attributes: ["type": type.rawValue, "from": from.description, "to": to.description])
    }

    // MARK: - Loop side

    /// Sends what a plan says, in order.
    private static func carryOut(_ plan: Plan, server: ServerContext) {
        for action in plan.actions {
            switch action {
            case .push(let owner, let item, let version):
                server.pushRosterItem(item, version: version, to: owner)
            case .deliver(let user, let stanza, let type):
                for handle in server.sessions.availableSessions(of: user) {
                    handle.withSession { session in
                        if type == .subscribe || session.state[RosterInterest.self] { session.send(stanza) }
                    }
                }
                if type == .subscribe, let contact = try? JID(stanza[attribute: "from"] ?? "") {
                    server.hooks.fire(SubscriptionRequested(user: user, contact: contact.bare, server: server))
                }
            case .presence(let from, let to, let type):
                server.sendCurrentPresence(of: from, to: to, type: type)
            case .approved(let user, let contact):
                server.hooks.fire(PresenceSubscriptionApproved(user: user, contact: contact, server: server))
            case .notify(let from, let user, let stanza):
                server.deliverPresence(stanza, from: from, to: user)
            }
        }
    }
}
