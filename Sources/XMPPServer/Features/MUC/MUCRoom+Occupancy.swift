import XMPPCore

/// Joining, changing presence or nickname, and leaving (XEP-0045 §7.2,
/// §7.6, §7.7, §7.14).
extension MUCRoom {
    /// Joins `resource` (of `user`) as `nick` with `presence`, sending it
    /// the occupants' presence, its own last (110, and 201 when `created`),
    /// the history it asked for, then the subject (§7.2.3, §7.2.15,
    /// §7.2.16). A user already in the room under `nick` joins it from
    /// one more resource; the others learn nothing new then.
    ///
    /// - Throws: `conflict` when another user has `nick` (§7.2.9),
    ///   `service-unavailable` when the room is full (§7.2.10).
    mutating func join(
        _ resource: JID, nick: String, presence: Element, history: MUCHistory.Request, created: Bool,
        maxOccupants: Int
    ) throws(StanzaError) -> [MUCDelivery] {
        let user = resource.bare
        var out: [MUCDelivery] = []
        if var occupant = occupants[nick] {
            guard occupant.user == user else {
                throw StanzaError(.conflict, type: .cancel, text: "this nickname is taken in this room")
            }
            if !occupant.resources.contains(resource) { occupant.resources.append(resource) }
            occupants[nick] = occupant
            nicks[resource] = nick
        } else {
            guard occupants.count < maxOccupants else {
                throw StanzaError(.serviceUnavailable, type: .wait, text: "this room is full")
            }
            let owner = created || user == creator
            let occupant = MUCOccupant(
                nick: nick, user: user, resources: [resource], presence: presence.asOccupantPresence,
                role: owner ? .moderator : .participant, affiliation: owner ? .owner : .none)
            occupants[nick] = occupant
            nicks[resource] = nick
            let others = nicks.keys.filter { $0 != resource }
            out += self.presence(of: occupant, to: others)
        }
        // The newcomer: everyone else's presence, then its own.
        let seesJIDs = seesJIDs(resource)
        for other in occupants.values where other.nick != nick {
            let element = self.presence(of: other, showing: seesJIDs ? other.resources.first : nil, statuses: [])
            out.append(MUCDelivery(to: resource, element: element.addressed(to: resource)))
        }
        let own = self.presence(
            of: occupants[nick]!, showing: resource, statuses: created ? [.created, .selfPresence] : [.selfPresence])
        out.append(MUCDelivery(to: resource, element: own.addressed(to: resource)))
        for message in self.history.messages(for: history) {
            out.append(MUCDelivery(to: resource, element: message.addressed(to: resource)))
        }
        out.append(MUCDelivery(to: resource, element: subjectMessage.addressed(to: resource)))
        return out
    }

    /// The subject as a joining occupant gets it: the last change, or an
    /// empty `<subject/>` from the room when there was none (§7.2.16).
    var subjectMessage: Element {
        if let subject { return subject }
        var message = Element(
            "message", namespace: NS.client, attributes: ["from": jid.description, "type": "groupchat"])
        message.append(Element("subject", namespace: NS.client))
        return message
    }

    /// An occupant's new available presence, for everyone (§7.7).
    mutating func update(_ resource: JID, presence: Element) -> [MUCDelivery] {
        guard var occupant = occupant(joinedFrom: resource) else { return [] }
        occupant.presence = presence.asOccupantPresence
        occupants[occupant.nick] = occupant
        return self.presence(of: occupant, to: nicks.keys)
    }

    /// Moves the occupant `resource` joined as, with all its resources,
    /// to `newNick` (§7.6): everyone gets its unavailable presence with
    /// 303 and the new nickname, then its presence under the new one.
    ///
    /// - Throws: `conflict` when someone has `newNick` already.
    mutating func changeNick(_ resource: JID, to newNick: String, presence: Element) throws(StanzaError)
        -> [MUCDelivery]
    {
        guard var occupant = occupant(joinedFrom: resource) else { return [] }
        guard occupants[newNick] == nil else {
            throw StanzaError(.conflict, type: .cancel, text: "this nickname is taken in this room")
        }
        let unavailable = Element("presence", namespace: NS.client)
        var out = self.presence(
            of: occupant, to: nicks.keys, unavailable: unavailable, statuses: [.nickChanged], newNick: newNick)
        occupants[occupant.nick] = nil
        occupant.nick = newNick
        occupant.presence = presence.asOccupantPresence
        occupants[newNick] = occupant
        for joined in occupant.resources { nicks[joined] = newNick }
        out += self.presence(of: occupant, to: nicks.keys)
        return out
    }

    /// Takes `resource` out of the room (§7.14), with `unavailable` (the
    /// client's presence, for its `<status/>`) or a bare one: it gets its
    /// own unavailable presence (110); when it was the occupant's last
    /// resource, everyone else gets it too.
    mutating func leave(_ resource: JID, unavailable: Element? = nil) -> [MUCDelivery] {
        guard var occupant = occupant(joinedFrom: resource) else { return [] }
        let unavailable = unavailable?.asOccupantPresence ?? Element("presence", namespace: NS.client)
        nicks[resource] = nil
        let leaving = occupant
        occupant.resources.removeAll { $0 == resource }
        guard occupant.resources.isEmpty else {
            occupants[occupant.nick] = occupant
            return presence(of: leaving, to: [resource], unavailable: unavailable)
        }
        occupants[occupant.nick] = nil
        return presence(of: leaving, to: [resource] + Array(nicks.keys), unavailable: unavailable)
    }
}
