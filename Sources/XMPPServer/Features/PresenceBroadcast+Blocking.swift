import XMPPCore
import XMPPStorage

/// XEP-0191 §3.3, §3.4: what a blocklist change does to presence. The
/// change itself is `Blocking`'s; this side observes `BlocklistChanged`.
extension PresenceBroadcast {
    @Sendable static func blocklistChanged(_ change: BlocklistChanged) {
        announceBlock(change)
        announceUnblock(change)
    }

    /// §3.3: unavailable presence from each available resource of the user
    /// to every newly blocked entity that had its presence: subscribers
    /// (or the blocked resource of one) and directed-presence recipients.
    /// Sent past the blocklists, which already block them.
    private static func announceBlock(_ change: BlocklistChanged) {
        let (before, after, server) = (change.before, change.after, change.server)
        var targets: [JID] = []
        for subscriber in contacts(in: change.roster, where: \.includesFrom) {
            if after.blocks(subscriber) {
                if !before.blocks(subscriber) { targets.append(subscriber) }
                continue
            }
            for jid in after.jids.subtracting(before.jids) {
                guard let blocked = try? JID(jid), blocked.resourcepart != nil, blocked.bare == subscriber else { continue }
                targets.append(blocked)
            }
        }
        for handle in server.sessions.availableSessions(of: change.user) {
            for target in targets { server.forwardPresence(unavailable(from: handle.jid, to: target), to: target) }
        }
        for handle in server.sessions.sessions(of: change.user) {
            handle.withSession { session in
                guard let jid = session.jid else { return }
                let blocked = session.state[DirectedPresence.self].filter { after.blocks($0) && !before.blocks($0) }
                for target in blocked {
                    session.server.forwardPresence(unavailable(from: jid, to: target), to: target)
                }
                session.state[DirectedPresence.self].subtract(blocked)
            }
        }
    }

    /// §3.4: the current presence of the user to unblocked subscribers, and
    /// the presence of unblocked contacts the user is subscribed to.
    private static func announceUnblock(_ change: BlocklistChanged) {
        let unblocked = { (contact: JID) in change.before.blocks(contact) && !change.after.blocks(contact) }
        for subscriber in contacts(in: change.roster, where: \.includesFrom) where unblocked(subscriber) {
            change.server.sendCurrentPresence(of: change.user, to: subscriber, type: .available)
        }
        for contact in contacts(in: change.roster, where: \.includesTo) where unblocked(contact) {
            change.server.sendCurrentPresence(of: contact, to: change.user, type: .available)
        }
    }

    private static func contacts(in roster: [RosterItem], where subscription: KeyPath<SubscriptionState.Subscription, Bool>) -> [JID] {
        roster.compactMap { item in item.state.subscription[keyPath: subscription] ? try? JID(item.contact) : nil }
    }

    private static func unavailable(from: JID, to: JID) -> Element {
        Element("presence", namespace: NS.client, attributes: ["type": "unavailable", "from": from.description, "to": to.description])
    }
}
