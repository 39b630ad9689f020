import XMPPCore

/// What a stanza handler did: took the stanza (nothing after it runs) or
/// passed it on to the next handler.
public enum Handling: Sendable {
    /// Delivered, answered or deliberately dropped: the chain stops.
    case handled
    /// Not this handler's (or it only looked or changed it): the next runs.
    case passed
}

/// A handler with the priority it was installed at: higher runs first, and
/// among equal priorities the one installed first.
struct Prioritized<Handler: Sendable>: Sendable {
    var priority: Int
    var order: Int
    var handler: Handler

    /// Whether this handler runs before `other`.
    func runs(before other: Self) -> Bool {
        (priority, -order) > (other.priority, -other.order)
    }
}

/// Any stanza from a bound session, before it is routed (`Hooks.onPreRoute`).
public struct RoutedStanza {
    /// The stanza; `from` is already stamped with the sender's full JID.
    public let element: Element
    /// The sender's full JID.
    public let sender: JID
    /// The address it goes to: its `to`, or nil when it has none.
    public let recipient: JID?
    /// The session it came from, for answering.
    public let session: ClientSession
}

/// Where a message from a bound session is addressed, as the router
/// resolved it (RFC 6121 §8.5).
public enum MessageTarget: Hashable, Sendable {
    /// A local account's bare JID, or no `to` (the sender's own bare JID,
    /// RFC 6120 §10.3.1).
    case bare
    /// A full JID at the served domain.
    case full
    /// The served domain itself.
    case host
    /// A local service's domain, or any address at it (`conference.localhost`).
    case service(String)
}

/// A message from a bound session on its way to a local address, passed
/// down the `Hooks.onMessage` chain: early handlers may change it (archive
/// ids, carbons' `<private/>`), one delivers it.
public struct RoutedMessage {
    /// The message as it will be delivered; `from` is the sender's full JID.
    public var element: Element
    /// The message as the sender's stanza was routed, before any handler
    /// changed it: what a bounce returns (RFC 6120 §8.3.1), without an
    /// archive id for a copy that will not exist.
    public let original: Element
    /// The sender's full JID.
    public let sender: JID
    /// Its `to`, or the sender's bare JID when it has none.
    public let recipient: JID
    /// The session it came from.
    public let session: ClientSession
    /// What handlers note about this message for later ones, under their
    /// own keys (carbons: whether it is eligible for copies).
    public var notes = FeatureState()

    /// The server it is routed on.
    public var server: ServerContext { session.server }

    /// A message on its way, as yet unchanged.
    init(element: Element, sender: JID, recipient: JID, session: ClientSession) {
        self.element = element
        self.original = element
        self.sender = sender
        self.recipient = recipient
        self.session = session
    }

    /// Answers the sender with `error` and the message as it was sent,
    /// unless the message is an error itself.
    public func bounce(_ error: StanzaError) {
        if let reply = Message(original)?.errorReply(error) { session.send(reply) }
    }
}

/// Which presence event a presence stanza from a bound session is
/// (RFC 6121 §3, §4).
public enum PresenceTarget: Hashable, Sendable {
    /// Available or unavailable presence with no `to`: the resource's
    /// availability, for its subscribers (§4.2, §4.4, §4.5).
    case broadcast
    /// Available, unavailable or error presence to a local address (§4.6).
    case directed
    /// `subscribe`, `subscribed`, `unsubscribe` or `unsubscribed` to a
    /// local address (§3).
    case subscription
    /// Any presence to a local service's domain or an address at it.
    case service(String)
}

/// A presence stanza from a bound session, passed down the
/// `Hooks.onPresence` chain.
public struct RoutedPresence {
    /// The stanza; `from` is the sender's full JID, `type` is known.
    public let presence: Presence
    /// The sender's full JID.
    public let sender: JID
    /// Its `to`; nil only for broadcast presence.
    public let recipient: JID?
    /// The session it came from.
    public let session: ClientSession
}

/// A chat or normal message for a user none of whose resources can take
/// it (RFC 6121 §8.5.2.1.1), passed to the `Hooks.onMessageOffline`
/// fallback: sent to a user who has no available resource, or accepted by
/// a session that ended before its client acknowledged it (XEP-0198).
public struct UndeliveredMessage {
    /// The message, as it would have been delivered.
    public let message: Message
    /// The message as its sender sent it: what an error reply returns
    /// (RoutedMessage.original).
    public let original: Element
    /// The user it is for (a bare JID).
    public let user: JID
    /// The sender's session while it waits for the outcome (its next
    /// stanzas wait too), or nil when no one waits: a message handed back
    /// by an ended session.
    public let waitingSender: ClientSession?
    /// The server it is on.
    public let server: ServerContext

    /// Answers the waiting sender, if any, with `error` and the message as
    /// it was sent.
    public func bounce(_ error: StanzaError) {
        if let waitingSender, let reply = Message(original)?.errorReply(error) { waitingSender.send(reply) }
    }
}

extension Hooks {
    // MARK: - Installing

    /// Runs `handler` on every stanza from a bound session before it is
    /// routed (Prosody's `pre-*` events): `.handled` stops it (the handler
    /// answered or dropped it), `.passed` lets it on. XEP-0191 blocking
    /// is one.
    public func onPreRoute(priority: Int = 0, _ handler: @escaping @Sendable (RoutedStanza) -> Handling) {
        preRouteHandlers.append(prioritized(priority, handler))
    }

    /// Runs `handler` on messages to each of `targets`, in priority order,
    /// until one returns `.handled`. A handler may change the message for
    /// those after it. A message nobody handles gets `service-unavailable`
    /// if it is chat or normal, and is dropped otherwise.
    public func onMessage(
        to targets: [MessageTarget], priority: Int = 0,
        _ handler: @escaping @Sendable (inout RoutedMessage) -> Handling
    ) {
        for target in targets {
            if case .service(let domain) = target { addServiceDomain(domain) }
            messageHandlers[target, default: []].append(prioritized(priority, handler))
        }
    }

    /// Runs `handler` on presence of each of `targets`, in priority order,
    /// until one returns `.handled`; presence nobody handles is dropped.
    public func onPresence(
        _ targets: [PresenceTarget], priority: Int = 0, _ handler: @escaping @Sendable (RoutedPresence) -> Handling
    ) {
        for target in targets {
            if case .service(let domain) = target { addServiceDomain(domain) }
            presenceHandlers[target, default: []].append(prioritized(priority, handler))
        }
    }

    /// Runs `handler` on a message that no resource can take (Prosody's
    /// `message/offline/handle`), in priority order until one returns
    /// `.handled`; if none does, a waiting sender gets `service-unavailable`.
    public func onMessageOffline(
        priority: Int = 0, _ handler: @escaping @Sendable (UndeliveredMessage) -> Handling
    ) {
        offlineHandlers.append(prioritized(priority, handler))
    }

    /// Runs `filter` on each stanza just before it is written to a client
    /// (`ClientSession.deliver`): `.handled` keeps it back (the filter sends
    /// it later, or never). Filters run in install order.
    public func onDeliver(_ filter: @escaping @Sendable (Element, ClientSession) -> Handling) {
        checkInstalling()
        deliveryFilters.append(filter)
    }

    func prioritized<Handler>(_ priority: Int, _ handler: Handler) -> Prioritized<Handler> {
        checkInstalling()
        defer { installed += 1 }
        return Prioritized(priority: priority, order: installed, handler: handler)
    }

    /// Puts every stanza handler list in firing order; `init` calls it once
    /// the features are installed.
    func sortByPriority() {
        func sorted<Handler>(_ list: [Prioritized<Handler>]) -> [Prioritized<Handler>] {
            list.sorted { $0.runs(before: $1) }
        }
        preRouteHandlers = sorted(preRouteHandlers)
        messageHandlers = messageHandlers.mapValues(sorted)
        presenceHandlers = presenceHandlers.mapValues(sorted)
        offlineHandlers = sorted(offlineHandlers)
    }

    // MARK: - Firing

    /// Whether a pre-route handler took `stanza`.
    func preRoute(_ stanza: RoutedStanza) -> Bool {
        for entry in preRouteHandlers where entry.handler(stanza) == .handled { return true }
        return false
    }

    /// Whether a message handler for `target` took `message`.
    func message(_ message: inout RoutedMessage, to target: MessageTarget) -> Bool {
        guard let handlers = messageHandlers[target] else { return false }
        for entry in handlers where entry.handler(&message) == .handled { return true }
        return false
    }

    /// Whether a presence handler for `target` took `presence`.
    func presence(_ presence: RoutedPresence, to target: PresenceTarget) -> Bool {
        guard let handlers = presenceHandlers[target] else { return false }
        for entry in handlers where entry.handler(presence) == .handled { return true }
        return false
    }

    /// Hands `message` to the offline fallback, answering a waiting sender
    /// with `service-unavailable` when no handler takes it.
    public func messageOffline(_ message: UndeliveredMessage) {
        for entry in offlineHandlers where entry.handler(message) == .handled { return }
        message.bounce(StanzaError(.serviceUnavailable))
    }

    /// Whether a delivery filter kept `element` back from `session`.
    func holdsBack(_ element: Element, for session: ClientSession) -> Bool {
        for filter in deliveryFilters where filter(element, session) == .handled { return true }
        return false
    }
}
