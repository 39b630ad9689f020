import XMPPCore
import XMPPStorage

/// RFC 6121 §4: availability presence. Initial presence is broadcast to the
/// contacts subscribed to the user (`from`, `both`) and answered with the
/// presence of the contacts the user is subscribed to (`to`, `both`; for
/// local contacts the server answers the probe itself); updates are
/// broadcast; unavailable presence goes out on logout and on any
/// disconnect; directed presence reaches its recipient, which also gets
/// the unavailable presence at the end (§4.6).
///
/// Fires `InitialPresence` once a resource's initial presence is out and
/// the contacts' presence is back (pending requests and offline messages
/// follow), and `LastUnavailable` when the user's last resource goes away.
public struct PresenceBroadcast: ServerFeature {
    /// The wall clock that stamps remembered presence.
    let clock: WallClock

    /// - Parameter clock: The wall clock that stamps remembered presence.
    public init(clock: WallClock = .system) {
        self.clock = clock
    }

    /// Entities this resource sent directed available presence to, which
    /// get its unavailable presence when it goes away (§4.6.3).
    enum DirectedPresence: FeatureStateKey {
        static let initialValue: Set<JID> = []
    }

    public func install(_ hooks: Hooks) {
        hooks.onPresence([.broadcast]) { [clock] presence in
            Self.broadcast(presence, clock: clock)
            return .handled
        }
        hooks.onPresence([.directed]) { presence in
            Self.direct(presence)
            return .handled
        }
        hooks.onSessionEnded(Self.sessionEnded)
        hooks.on(BlocklistChanged.self, Self.blocklistChanged)
    }

    /// Directed presence (§4.6): available and unavailable are remembered
    /// for the unavailable at the end, errors only forwarded.
    private static func direct(_ routed: RoutedPresence) {
        let session = routed.session
        guard let recipient = routed.recipient, let type = routed.presence.type else { return }
        let element = routed.presence.element
        guard type != .error else { return session.server.forwardPresence(element, to: recipient) }
        let limit = session.server.config.limits.maxDirectedPresence
        let directed = session.state[DirectedPresence.self]
        if type == .available, !directed.contains(recipient), directed.count >= limit {
            let error = StanzaError(.policyViolation, text: "directed presence goes to at most \(limit) entities")
            session.server.metrics.limitsHit.increment(.maxDirectedPresence)
            if let reply = routed.presence.errorReply(error) { session.send(reply) }
            return
        }
        session.server.forwardPresence(element, to: recipient)
        if type == .available {
            session.state[DirectedPresence.self].insert(recipient)
        } else {
            session.state[DirectedPresence.self].remove(recipient)
        }
    }

    /// Broadcast presence (no `to`): updates the resource's availability and
    /// tells its subscribers and the user's other resources (§4.2, §4.4,
    /// §4.5); the last available resource going away is the user's logout.
    private static func broadcast(_ routed: RoutedPresence, clock: WallClock) {
        let session = routed.session
        let presence = routed.presence
        guard let handle = session.handle, let jid = session.jid else { return }
        let priority: Int8
        do {
            try presence.validate()
            priority = try presence.priority
        } catch {
            if let reply = presence.errorReply(error) { session.send(reply) }
            return
        }
        let wasAvailable = handle.isAvailable
        let isInitial = !wasAvailable && presence.type == .available
        if presence.type == .available {
            handle.presence = (remembered(presence.element, domain: session.server.domain, clock: clock), priority)
        } else {
            // An unavailable resource going unavailable tells no one anything
            // (RFC 6121 §4.5.2 broadcasts the end of an availability), but
            // directed presence it sent still gets its unavailable.
            guard wasAvailable || !session.state[DirectedPresence.self].isEmpty else { return }
            handle.presence = nil
            if wasAvailable {
                // §4.5.2: the resource that went unavailable (its stream
                // still open) gets it too, as its other resources do.
                session.deliver(presence.element.addressed(to: jid))
                if session.server.sessions.availableSessions(of: jid.bare).isEmpty {
                    session.server.hooks.fire(LastUnavailable(user: jid.bare, status: presence.status, server: session.server))
                }
            }
        }
        session.server.hooks.broadcastPresence(presence, from: session)
        let directed = presence.type == .unavailable ? session.state[DirectedPresence.self] : []
        if presence.type == .unavailable { session.state[DirectedPresence.self] = [] }
        let username = jid.localpart!
        // From the moment the resource is available, messages may come to
        // it: they wait behind what the login brings (`welcome`), the
        // offline messages above all, which were sent before them.
        if isInitial { session.holdDeliveries() }
        session.withStorage({ stores in try stores.roster.items(of: username) }) { result in
            defer { if isInitial { session.releaseDeliveries() } }
            guard case .success(let items) = result else { return }
            send(presence.element, from: jid, to: items, directed: directed, server: session.server)
            if isInitial { welcome(session, items: items) }
        }
    }

    /// Sends `stanza` from resource `jid` to its subscribers, the user's
    /// available resources, and `directed` recipients, each copy addressed
    /// to its recipient (RFC 6120 §8.1.1.1).
    private static func send(_ stanza: Element, from jid: JID, to items: [RosterItem], directed: Set<JID>, server: ServerContext) {
        for item in items where item.state.subscription.includesFrom {
            guard let contact = try? JID(item.contact) else { continue }
            server.deliverPresence(stanza, from: jid, to: contact)
        }
        // §4.2.2, §4.4.2: every available resource of the user, the sender
        // included (an unavailable sender is no longer among them).
        for handle in server.sessions.availableSessions(of: jid.bare) { handle.deliver(stanza.addressed(to: handle.jid)) }
        for recipient in directed { server.deliverPresence(stanza, from: jid, to: recipient) }
    }

    /// `presence` as the server keeps it for a resource, to send again
    /// later rather than as it arrives (probe answers, §4.3.2; the presence
    /// re-sent after an approval or an unblock): with an XEP-0203 `<delay/>`
    /// of its arrival, which is when it was current, as Prosody does.
    private static func remembered(_ presence: Element, domain: String, clock: WallClock) -> Element {
        var remembered = presence
        remembered.append(.delay(from: domain, at: clock.milliseconds))
        return remembered
    }

    /// After initial presence (§4.2.2, §4.3.2): the current presence of the
    /// contacts the user is subscribed to and of the user's other
    /// resources; then `InitialPresence` for what else a login brings.
    ///
    /// Contacts the user blocks, or who block the user and are online, are
    /// left out (XEP-0191 §3.3: a probe between them is not answered). A
    /// contact who blocks the user but is offline gets the answer of any
    /// offline contact, unavailable: what the user would see anyway, and it
    /// saves a storage lookup.
    private static func welcome(_ session: ClientSession, items: [RosterItem]) {
        guard let jid = session.jid else { return }
        let server = session.server
        for item in items where item.state.subscription == .to || item.state.subscription == .both {
            guard let contact = try? JID(item.contact), server.blocklists.verdict(from: contact, to: jid) == .allowed
            else { continue }
            let available = server.sessions.availableSessions(of: contact)
            for handle in available {
                if let current = handle.presence?.presence { session.send(current.addressed(to: jid)) }
            }
            if available.isEmpty {
                // §4.3.2: the probe's answer for a contact with no
                // available resource is unavailable presence.
                session.send(
                    Element("presence", namespace: NS.client,
                        attributes: ["type": "unavailable", "from": contact.description, "to": jid.description]))
            }
        }
        for handle in server.sessions.availableSessions(of: jid.bare) where handle.jid != jid {
            if let current = handle.presence?.presence { session.send(current.addressed(to: jid)) }
        }
        server.hooks.fire(InitialPresence(session: session, roster: items))
    }

    /// The end of a session that was available: unavailable presence to
    /// everyone who had its presence (§4.5.2, also for abrupt disconnects),
    /// and the user's logout if it was the last available one.
    @Sendable private static func sessionEnded(_ session: ClientSession) {
        guard let handle = session.handle, handle.isAvailable else { return }
        let jid = handle.jid
        handle.presence = nil
        let directed = session.state[DirectedPresence.self]
        let server = session.server
        if server.sessions.availableSessions(of: jid.bare).isEmpty {
            server.hooks.fire(LastUnavailable(user: jid.bare, status: nil, server: server))
        }
        let unavailable = Element(
            "presence", namespace: NS.client, attributes: ["type": "unavailable", "from": jid.description])
        server.storage.run(on: server.loop, { stores in try stores.roster.items(of: jid.localpart!) }) { result in
            guard case .success(let items) = result else { return }
            send(unavailable, from: jid, to: items, directed: directed, server: server)
        }
    }
}
