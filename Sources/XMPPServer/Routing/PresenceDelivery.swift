import XMPPCore

/// Presence the server sends between local users: the shared service that
/// presence broadcast, subscriptions and blocking all send through
/// (RFC 6121 §4, §8.5.2.1.1, §8.5.3).
///
/// Every presence delivered carries its recipient's address as `to` (RFC
/// 6120 §8.1.1.1): the bare JID for presence to an account, a full JID
/// for presence to one resource.
extension ServerContext {
    /// Delivers a presence to a local entity whatever the blocklists say:
    /// a bare JID reaches every available resource, a full JID that
    /// resource (if it is connected); anything else is dropped.
    func forwardPresence(_ stanza: Element, to recipient: JID) {
        guard recipient.localpart != nil, recipient.domainpart == domain else { return }
        let addressed = stanza.addressed(to: recipient)
        if recipient.isBare {
            for handle in sessions.availableSessions(of: recipient) { handle.deliver(addressed) }
        } else if let handle = sessions.session(recipient) {
            handle.deliver(addressed)
        }
    }

    /// Delivers a presence from `sender` (a local user) to a local entity,
    /// unless one blocks the other (XEP-0191 §3.3): presence the server
    /// generates is dropped silently, whoever blocks whom.
    func deliverPresence(_ stanza: Element, from sender: JID, to recipient: JID) {
        guard blocklists.verdict(from: sender, to: recipient) == .allowed else { return }
        forwardPresence(stanza, to: recipient)
    }

    /// The current presence of each available resource of `user` (or its
    /// unavailable presence, for `type` unavailable) to `contact`. The
    /// current presence is the one the server remembers, with the delay
    /// stamp of its arrival (`PresenceBroadcast.remembered`).
    func sendCurrentPresence(of user: JID, to contact: JID, type: Presence.PresenceType) {
        for handle in sessions.availableSessions(of: user) {
            let stanza =
                if type == .available, let current = handle.presence?.presence {
                    current
                } else {
                    Element(
                        "presence", namespace: NS.client, attributes: ["type": "unavailable", "from": handle.jid.description])
                }
            deliverPresence(stanza, from: handle.jid, to: contact)
        }
    }
}

extension Element {
    /// This stanza with `recipient` as its `to` (RFC 6120 §8.1.1.1).
    func addressed(to recipient: JID) -> Element {
        var addressed = self
        addressed[attribute: "to"] = recipient.description
        return addressed
    }
}
