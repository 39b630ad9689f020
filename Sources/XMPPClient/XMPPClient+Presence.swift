import XMPPCore

extension XMPPClient {
    /// Sets our presence for every contact: available (optionally chat,
    /// away, xa or dnd) or unavailable, with status text and priority. It
    /// is kept and sent again after each reconnect.
    public func setPresence(_ availability: Availability, status: String? = nil, priority: Int8 = 0) {
        var presence = Presence(
            type: availability == .unavailable ? .unavailable : .available,
            show: Presence.Show(rawValue: availability.rawValue), status: status,
            priority: priority == 0 ? nil : priority)
        presence.element[attribute: "xml:lang"] = nil
        ownPresence = presence
        send(stamped(presence).element)
        if presence.type == .available { sendPresenceToRooms() }
    }

    /// The available resources of `jid` (a bare JID), highest priority first.
    public func presences(of jid: JID) -> [ContactPresence] {
        (presences[jid.bare]?.values ?? [:].values).sorted { $0.priority > $1.priority }
    }

    func handle(_ presence: Presence) {
        guard let from = presence.from, !handleRoomPresence(presence) else { return }
        switch presence.type {
        case .available, .unavailable:
            let available = presence.type == .available
            let update = ContactPresence(
                jid: from,
                availability: available
                    ? presence.show.flatMap { Availability(rawValue: $0.rawValue) } ?? .available : .unavailable,
                status: presence.status, priority: (try? presence.priority) ?? 0,
                avatarHash: presence.element.child("x", namespace: NS.vcardUpdate)?.childText("photo", namespace: NS.vcardUpdate)
                    ?? avatarHashes[from.bare])
            presences[from.bare, default: [:]][from] = available ? update : nil
            if presences[from.bare]?.isEmpty == true { presences[from.bare] = nil }
            broadcaster.publish(.presence(update))
        case .subscribe:
            if configuration.autoAcceptKnownContacts, contacts[from.bare] != nil {
                send(Presence(type: .subscribed, to: from.bare).element)
            } else {
                broadcaster.publish(.subscriptionRequest(from: from.bare, status: presence.status))
            }
        case .subscribed:
            broadcaster.publish(.subscriptionAnswer(from: from.bare, approved: true))
        case .unsubscribed:
            broadcaster.publish(.subscriptionAnswer(from: from.bare, approved: false))
        case .unsubscribe, .probe, .error, nil:
            break
        }
    }
}
