import XMPPCore

/// Joining, changing presence or nickname, and leaving (XEP-0045 §7.2,
/// §7.6, §7.7, §7.14).
extension MUCRoom {
    /// What a join asks for besides the nickname: the presence to show,
    /// the password given, and the history wanted.
    struct JoinRequest: Sendable {
        var presence: Element
        var password: String?
        var history: MUCHistory.Request
        /// Whether the join carried `<x xmlns='…muc'/>`: a client that
        /// knows XEP-0045 and may configure the room it creates. A room
        /// created by one that does not (groupchat 1.0) is not locked.
        var knowsMUC = true
    }

    /// Joins `resource` (of `user`) as `nick`, sending it the occupants'
    /// presence, its own last (110; 201 when `created`; 100 when
    /// everyone sees real JIDs), the history it asked for, then the
    /// subject (§7.2.3, §7.2.15, §7.2.16). A user already in the room
    /// under `nick` joins it from one more resource; the others get its
    /// presence again, which shows those who see real JIDs every resource.
    ///
    /// - Parameter serviceLimit: `muc_max_occupants`, which owners and
    ///   admins may fill beyond the room's own maximum.
    /// - Throws: `item-not-found` while the room is locked (§10.1.1),
    ///   `forbidden` for an outcast (§7.2.8), `registration-required`
    ///   for a non-member of a members-only room (§7.2.7),
    ///   `not-authorized` without the password (§7.2.6), `conflict` when
    ///   another user has or registered `nick` (§7.2.9),
    ///   `service-unavailable` when the room is full (§7.2.10).
    mutating func join(
        _ resource: JID, nick: String, _ request: JoinRequest, created: Bool, serviceLimit: Int
    ) throws(StanzaError) -> [MUCDelivery] {
        let user = resource.bare
        let affiliation = affiliation(of: user)
        try checkEntry(of: user, affiliation: affiliation, nick: nick, request, serviceLimit: serviceLimit)
        var out: [MUCDelivery] = []
        if var occupant = occupants[nick] {
            // One more resource, or a rejoin: its presence is the latest.
            if !occupant.resources.contains(resource) { occupant.resources.append(resource) }
            occupant.presence = request.presence.asOccupantPresence
            occupants[nick] = occupant
            nicks[resource] = nick
            out += self.presence(of: occupant, to: nicks.keys.filter { $0 != resource })
        } else {
            let occupant = MUCOccupant(
                nick: nick, user: user, resources: [resource], presence: request.presence.asOccupantPresence,
                role: defaultRole(for: affiliation), affiliation: affiliation)
            occupants[nick] = occupant
            nicks[resource] = nick
            let others = nicks.keys.filter { $0 != resource }
            out += self.presence(of: occupant, to: others)
        }
        // The newcomer: everyone else's presence, then its own.
        let seesJIDs = seesJIDs(resource)
        for other in occupants.values where other.nick != nick && broadcasts(other) {
            let element = self.presence(of: other, showing: seesJIDs ? realJIDs(of: other) : [], statuses: [])
            out.append(MUCDelivery(to: resource, element: element))
        }
        out += absentMembers(for: resource)
        var statuses: [Status] = [.selfPresence]
        if created { statuses.insert(.created, at: 0) }
        if configuration.isNonAnonymous { statuses.insert(.nonAnonymous, at: 0) }
        let own = self.presence(of: occupants[nick]!, showing: [resource], statuses: statuses)
        out.append(MUCDelivery(to: resource, element: own))
        for message in self.history.messages(for: request.history) {
            out.append(MUCDelivery(to: resource, element: message))
        }
        out.append(MUCDelivery(to: resource, element: subjectMessage))
        return out
    }

    /// Throws why `user`, with `affiliation`, may not enter as `nick`
    /// (see `join`); returns when it may.
    private func checkEntry(
        of user: JID, affiliation: MUCAffiliation, nick: String, _ request: JoinRequest, serviceLimit: Int
    ) throws(StanzaError) {
        if isLocked, affiliation != .owner {
            throw StanzaError(.itemNotFound, type: .cancel, text: "this room is locked until its owner configures it")
        }
        if affiliation == .outcast { throw StanzaError(.forbidden, type: .auth, text: "you are banned from this room") }
        if configuration.membersOnly, affiliation < .member {
            throw StanzaError(.registrationRequired, type: .auth, text: "only members may enter this room")
        }
        if !configuration.password.isEmpty, request.password != configuration.password {
            throw StanzaError(.notAuthorized, type: .auth, text: "this room takes a password")
        }
        if let holder = occupants[nick], holder.user != user {
            throw StanzaError(.conflict, type: .cancel, text: "this nickname is taken in this room")
        }
        if let registered = affiliations.first(where: { $0.value.nick == nick })?.key, registered != user {
            throw StanzaError(.conflict, type: .cancel, text: "this nickname is registered by someone else")
        }
        let isNewcomer = occupants[nick] == nil
        let limit = affiliation >= .admin ? serviceLimit : min(configuration.maxUsers, serviceLimit)
        if isNewcomer, occupants.count >= limit {
            throw StanzaError(.serviceUnavailable, type: .wait, text: "this room is full")
        }
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
        if let registered = affiliations.first(where: { $0.value.nick == newNick })?.key, registered != occupant.user {
            throw StanzaError(.conflict, type: .cancel, text: "this nickname is registered by someone else")
        }
        let unavailable = Element("presence", namespace: NS.client)
        var out = self.presence(
            of: occupant, to: nicks.keys, unavailable: unavailable,
            note: PresenceNote(statuses: [.nickChanged], newNick: newNick))
        occupants[occupant.nick] = nil
        occupant.nick = newNick
        occupant.presence = presence.asOccupantPresence
        occupants[newNick] = occupant
        for joined in occupant.resources { nicks[joined] = newNick }
        out += self.presence(of: occupant, to: nicks.keys)
        return out
    }

    /// Takes `resource` out of the room (§7.14), with `unavailable` (the
    /// client's presence, for its `<status/>`) or a bare one, and `note`:
    /// it gets its own unavailable presence (110); when it was the
    /// occupant's last resource, everyone else gets it too, else they get
    /// the occupant's presence without it.
    mutating func leave(_ resource: JID, unavailable: Element? = nil, note: PresenceNote = PresenceNote())
        -> [MUCDelivery]
    {
        guard var occupant = occupant(joinedFrom: resource) else { return [] }
        let unavailable = unavailable?.asOccupantPresence ?? Element("presence", namespace: NS.client)
        nicks[resource] = nil
        let leaving = occupant
        occupant.resources.removeAll { $0 == resource }
        guard occupant.resources.isEmpty else {
            occupants[occupant.nick] = occupant
            return presence(of: leaving, to: [resource], unavailable: unavailable, note: note)
                + presence(of: occupant, to: nicks.keys)
        }
        occupants[occupant.nick] = nil
        return presence(of: leaving, to: [resource] + Array(nicks.keys), unavailable: unavailable, note: note)
    }

    /// Takes `resource` out of the room after it answered the room with
    /// the presence error `error` (RFC 6120 §8.3: it cannot take the
    /// room's stanzas): as a leave with status 333 and the error in the
    /// `<status/>`.
    mutating func remove(_ resource: JID, failingWith error: StanzaError) -> [MUCDelivery] {
        let condition = error.condition.rawValue.replacingOccurrences(of: "-", with: " ")
        let text = "Kicked: \(condition)" + (error.text.map { ": \($0)" } ?? "")
        let unavailable = Element(
            "presence", namespace: NS.client,
            children: [.element(Element("status", namespace: NS.client, children: [.text(text)]))])
        return leave(resource, unavailable: unavailable, note: PresenceNote(statuses: [.technicalError]))
    }

    /// Takes the occupant called `nick` out of the room with all its
    /// resources, as a kick, ban, removal or the room's end does: everyone,
    /// the occupant included (with 110), gets its unavailable presence
    /// carrying `note`.
    mutating func remove(_ nick: String, note: PresenceNote) -> [MUCDelivery] {
        guard let occupant = occupants.removeValue(forKey: nick) else { return [] }
        let out = presence(of: occupant, to: Array(nicks.keys), unavailable: Element("presence", namespace: NS.client), note: note)
        for resource in occupant.resources { nicks[resource] = nil }
        return out
    }
}
