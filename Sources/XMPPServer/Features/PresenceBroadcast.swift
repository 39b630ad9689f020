import XMPPCore
import XMPPStorage

/// RFC 6121 §4: availability presence. Initial presence is broadcast to the
/// contacts subscribed to the user (`from`, `both`) and answered with the
/// presence of the contacts the user is subscribed to (`to`, `both`; for
/// local contacts the server answers the probe itself); updates are
/// broadcast; unavailable presence goes out on logout and on any
/// disconnect; directed presence reaches its recipient, which also gets
/// the unavailable presence at the end (§4.6).
enum PresenceBroadcast {
    /// The hooks: unavailable presence when a session ends.
    struct Feature: ServerFeature {
        func install(_ hooks: inout Hooks) {
            hooks.onSessionEnded { session in sessionEnded(session) }
        }
    }

    /// Handles a presence stanza from a bound session; `from` is stamped.
    static func route(_ element: Element, to recipient: JID?, from session: ClientSession) {
        guard let presence = Presence(element) else { return }
        guard let type = presence.type else {
            if let reply = presence.errorReply(StanzaError(.badRequest, text: "unknown presence type")) { session.send(reply) }
            return
        }
        switch type {
        case .subscribe, .subscribed, .unsubscribe, .unsubscribed:
            guard let recipient else {
                if let reply = presence.errorReply(StanzaError(.badRequest, text: "a subscription needs a 'to'")) {
                    session.send(reply)
                }
                return
            }
            if Blocking.refuses(element, to: recipient, from: session, checkingRecipient: false) { return }
            Subscriptions.handle(type, element, to: recipient, from: session)
        case .probe:
            break  // RFC 6121 §4.3: probes are the server's business, not the client's.
        case .error:
            if let recipient, !Blocking.refuses(element, to: recipient, from: session) {
                forward(element, to: recipient, server: session.server)
            }
        case .available, .unavailable:
            guard let recipient else { return broadcast(presence, from: session) }
            if Blocking.refuses(element, to: recipient, from: session) { return }
            let limit = session.server.config.limits.maxDirectedPresence
            if type == .available, !session.directedPresence.contains(recipient),
                session.directedPresence.count >= limit
            {
                let error = StanzaError(.policyViolation, text: "directed presence goes to at most \(limit) entities")
                if let reply = presence.errorReply(error) { session.send(reply) }
                return
            }
            forward(element, to: recipient, server: session.server)
            if type == .available { session.directedPresence.insert(recipient) } else { session.directedPresence.remove(recipient) }
        }
    }

    /// Broadcast presence (no `to`): updates the resource's availability and
    /// tells its subscribers and the user's other resources (§4.2, §4.4,
    /// §4.5); the last available resource going away is the user's logout
    /// (XEP-0012).
    private static func broadcast(_ presence: Presence, from session: ClientSession) {
        guard let handle = session.handle, let jid = session.jid else { return }
        let priority: Int8
        do {
            try presence.validate()
            priority = try presence.priority
        } catch {
            if let reply = presence.errorReply(error) { session.send(reply) }
            return
        }
        let isInitial = !handle.isAvailable && presence.type == .available
        if presence.type == .available {
            handle.presence = (presence.element, priority)
        } else {
            let wasAvailable = handle.isAvailable
            // An unavailable resource going unavailable tells no one anything
            // (RFC 6121 §4.5.2 broadcasts the end of an availability), but
            // directed presence it sent still gets its unavailable.
            guard wasAvailable || !session.directedPresence.isEmpty else { return }
            handle.presence = nil
            if wasAvailable, session.server.sessions.availableSessions(of: jid.bare).isEmpty {
                LastActivity.recordLogout(of: jid.bare, status: presence.status, server: session.server)
            }
        }
        session.server.hooks.broadcastPresence(presence, from: session)
        let directed = presence.type == .unavailable ? session.directedPresence : []
        if presence.type == .unavailable { session.directedPresence = [] }
        let username = jid.localpart!
        session.withStorage({ stores in try stores.roster.items(of: username) }) { result in
            guard case .success(let items) = result else { return }
            send(presence.element, from: jid, to: items, directed: directed, server: session.server)
            if isInitial { welcome(session, items: items) }
        }
    }

    /// Sends `stanza` from resource `jid` to its subscribers, the user's
    /// available resources, and `directed` recipients.
    private static func send(_ stanza: Element, from jid: JID, to items: [RosterItem], directed: Set<JID>, server: ServerContext) {
        for item in items where item.state.subscription == .from || item.state.subscription == .both {
            guard let contact = try? JID(item.contact) else { continue }
            deliver(stanza, from: jid, to: contact, server: server)
        }
        // §4.2.2, §4.4.2: every available resource of the user, the sender
        // included (an unavailable sender is no longer among them).
        for handle in server.sessions.availableSessions(of: jid.bare) { handle.deliver(stanza) }
        for recipient in directed { deliver(stanza, from: jid, to: recipient, server: server) }
    }

    /// After initial presence (§4.2.2, §4.3.2): the current presence of the
    /// contacts the user is subscribed to and of the user's other
    /// resources, the subscription requests still unanswered (§3.1.3),
    /// then the messages kept while the user was offline.
    ///
    /// Contacts the user blocks, or who block the user and are online, are
    /// left out, and so are requests from contacts the user blocks
    /// (XEP-0191 §3.3: a probe between them is not answered). A contact who
    /// blocks the user but is offline gets the answer of any offline
    /// contact, unavailable: what the user would see anyway, and it saves a
    /// storage lookup.
    private static func welcome(_ session: ClientSession, items: [RosterItem]) {
        guard let jid = session.jid else { return }
        let server = session.server
        let isBlocked = { (contact: JID) in server.blocklists.verdict(from: contact, to: jid) != .allowed }
        for item in items where item.state.subscription == .to || item.state.subscription == .both {
            guard let contact = try? JID(item.contact), !isBlocked(contact) else { continue }
            let available = server.sessions.availableSessions(of: contact)
            for handle in available {
                if let current = handle.presence?.presence { session.send(current) }
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
            if let current = handle.presence?.presence { session.send(current) }
        }
        for item in items where item.state.pendingIn {
            guard let request = item.pendingInRequest, let contact = try? JID(item.contact), !isBlocked(contact)
            else { continue }
            session.send(Subscriptions.pendingRequest(request, from: contact, to: jid, log: session.log))
        }
        OfflineMessages.deliver(to: session)
    }

    /// The end of a session that was available: unavailable presence to
    /// everyone who had its presence (§4.5.2, also for abrupt disconnects),
    /// and the user's logout (XEP-0012) if it was the last available one.
    static func sessionEnded(_ session: ClientSession) {
        guard let handle = session.handle, handle.isAvailable else { return }
        let jid = handle.jid
        handle.presence = nil
        let directed = session.directedPresence
        let server = session.server
        if server.sessions.availableSessions(of: jid.bare).isEmpty {
            LastActivity.recordLogout(of: jid.bare, status: nil, server: server)
        }
        let unavailable = Element(
            "presence", namespace: NS.client, attributes: ["type": "unavailable", "from": jid.description])
        server.storage.run(on: server.loop, { stores in try stores.roster.items(of: jid.localpart!) }) { result in
            guard case .success(let items) = result else { return }
            send(unavailable, from: jid, to: items, directed: directed, server: server)
        }
    }

    /// The current presence of each available resource of `user` (or their
    /// unavailable presence) to the contact's available resources.
    static func sendCurrentPresence(of user: JID, to contact: JID, type: Presence.PresenceType, server: ServerContext) {
        for handle in server.sessions.availableSessions(of: user) {
            var stanza: Element
            if type == .available, let current = handle.presence?.presence {
                stanza = current
            } else {
                stanza = Element("presence", namespace: NS.client, attributes: ["type": "unavailable", "from": handle.jid.description])
            }
            stanza[attribute: "to"] = contact.description
            deliver(stanza, from: handle.jid, to: contact, server: server)
        }
    }

    /// Delivers a presence from `sender` (a local user) to a local entity,
    /// unless one blocks the other (XEP-0191 §3.3): server-generated
    /// presence is dropped silently, whoever blocks whom.
    static func deliver(_ stanza: Element, from sender: JID, to recipient: JID, server: ServerContext) {
        guard server.blocklists.verdict(from: sender, to: recipient) == .allowed else { return }
        forward(stanza, to: recipient, server: server)
    }

    /// Delivers a presence to a local entity (RFC 6121 §8.5.2.1.1 and
    /// §8.5.3), whatever the blocklists say: a bare JID reaches every
    /// available resource, a full JID that resource (if it is connected);
    /// anything else is dropped.
    static func forward(_ stanza: Element, to recipient: JID, server: ServerContext) {
        guard recipient.localpart != nil, recipient.domainpart == server.domain else { return }
        if recipient.isBare {
            for handle in server.sessions.availableSessions(of: recipient) { handle.deliver(stanza) }
        } else if let handle = server.sessions.session(recipient) {
            handle.deliver(stanza)
        }
    }
}
