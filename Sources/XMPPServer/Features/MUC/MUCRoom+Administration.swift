import XMPPCore

/// Moderators' and admins' changes of roles and affiliations, and their
/// lists (XEP-0045 §8, §9): kick, voice, ban, membership, admins, owners.
extension MUCRoom {
    /// Gives the occupant called `nick` `role` on behalf of `actor` (the
    /// requester's full JID), with `reason`: `none` kicks it (307,
    /// §8.2), `visitor` and `participant` take or give voice (§8.3, §8.4),
    /// `moderator` makes it a moderator (§9.6).
    ///
    /// - Throws: `item-not-found` when no one has `nick`, `not-allowed`
    ///   when `actor` is no moderator in the room, its affiliation is
    ///   below the occupant's, or it gives or takes the moderator role
    ///   without being an admin or owner (§8.2, §9.6).
    mutating func setRole(_ role: MUCRole, of nick: String, by actor: JID, reason: String?) throws(StanzaError)
        -> [MUCDelivery]
    {
        guard var occupant = occupants[nick] else {
            throw StanzaError(.itemNotFound, type: .modify, text: "no one in this room has this nickname")
        }
        guard let moderator = self.occupant(joinedFrom: actor), moderator.role == .moderator else {
            throw StanzaError(.notAllowed, type: .cancel, text: "only moderators in the room may change roles")
        }
        let actorAffiliation = affiliation(of: actor)
        guard actorAffiliation >= occupant.affiliation else {
            throw StanzaError(.notAllowed, type: .cancel, text: "you may not change the role of someone above you")
        }
        if role == .moderator || occupant.role == .moderator, actorAffiliation < .admin {
            throw StanzaError(.notAllowed, type: .cancel, text: "only admins and owners make or unmake moderators")
        }
        var note = PresenceNote(actor: moderator.nick, actorJID: actor, reason: reason)
        guard role != .none else {
            note.statuses = [.kicked]
            return remove(nick, note: note)
        }
        let wasModerator = occupant.role == .moderator
        occupant.role = role
        occupants[nick] = occupant
        var out = presence(of: occupant, to: nicks.keys, note: note)
        if wasModerator != (role == .moderator) { out += occupantList(for: occupant) }
        return out
    }

    /// Sets `user`'s affiliation (a bare JID, or a domain for a ban) to
    /// `affiliation` on behalf of `actor` (nil: the room itself, as for
    /// a registration), keeping `reason` and a registered `nick` with it
    /// (§9, §10, §7.10). Another user's occupant holding `nick` is
    /// kicked (307). The user's occupant, if in the room, takes the
    /// affiliation's role: an outcast leaves it with 301 (§9.1), one no
    /// longer a member of a members-only room with 321 (§9.4); an absent
    /// user's change is announced to those who see real JIDs.
    ///
    /// - Throws: `not-allowed` unless `actor` is an owner, or an admin
    ///   changing someone below admin to something below admin (§9, §10);
    ///   `conflict` when the last owner would leave the room ownerless
    ///   (§10.9); `resource-constraint` when the room already keeps
    ///   `limit` affiliations (`muc_max_affiliations`).
    mutating func setAffiliation(
        _ affiliation: MUCAffiliation, of user: JID, by actor: JID?, reason: String?, nick: String? = nil, limit: Int
    ) throws(StanzaError) -> [MUCDelivery] {
        let user = user.bare
        let previous = affiliations[user]?.affiliation ?? .none
        if let actor {
            switch self.affiliation(of: actor) {
            case .owner: break
            case .admin where affiliation < .admin && previous < .admin: break
            default: throw StanzaError(.notAllowed, type: .cancel, text: "you may not change this affiliation")
            }
        }
        if previous == .owner, affiliation < .owner,
            !affiliations.contains(where: { $0.key != user && $0.value.affiliation == .owner })
        {
            throw StanzaError(.conflict, type: .cancel, text: "a room keeps at least one owner")
        }
        if affiliation != .none, affiliations[user] == nil, affiliations.count >= limit {
            throw StanzaError(.resourceConstraint, type: .wait, text: "a room keeps at most \(limit) affiliations")
        }
        var out: [MUCDelivery] = []
        if let nick {
            guard let address = try? JID(localpart: jid.localpart, domainpart: jid.domainpart, resourcepart: nick),
                address.resourcepart == nick
            else { throw StanzaError(.jidMalformed, type: .modify, text: "not a valid nickname") }
            if affiliations.contains(where: { $0.key != user && $0.value.nick == nick }) {
                throw StanzaError(.conflict, type: .cancel, text: "someone else registered this nickname")
            }
            if let holder = occupants[nick], holder.user != user {
                // Its holder goes, unless the actor may not kick it.
                if let actor, self.affiliation(of: actor) < holder.affiliation {
                    throw StanzaError(.conflict, type: .cancel, text: "someone above you has this nickname")
                }
                out += remove(nick, note: PresenceNote(statuses: [.kicked], reason: "This nickname is reserved"))
            }
        }
        revision += 1
        if affiliation == .none {
            affiliations[user] = nil
        } else {
            let record = affiliations[user]
            // An outcast keeps no nickname reserved.
            affiliations[user] = MUCAffiliationRecord(
                affiliation: affiliation, nick: affiliation == .outcast ? nil : nick ?? record?.nick,
                reason: reason ?? record?.reason)
        }
        let role = defaultRole(for: affiliation)
        let actorNick = actor.flatMap { occupant(joinedFrom: $0)?.nick }
        let note = PresenceNote(actor: actorNick, actorJID: actor, reason: reason)
        // A domain's ban reaches its users who have no affiliation of
        // their own.
        let affected = occupants.values.filter {
            $0.user == user
                || (user.localpart == nil && affiliation == .outcast && $0.user.domainpart == user.domainpart
                    && affiliations[$0.user] == nil)
        }
        guard !affected.isEmpty else {
            return out + toThoseWhoSeeJIDs(announcement(affiliation, of: user, reason: reason))
        }
        for var occupant in affected {
            let wasModerator = occupant.role == .moderator
            occupant.affiliation = affiliation
            guard role != .none else {
                var removal = note
                removal.statuses = [affiliation == .outcast ? .banned : .affiliationRemoved]
                occupants[occupant.nick] = occupant
                out += remove(occupant.nick, note: removal)
                continue
            }
            // A higher affiliation raises the role; a lower one resets it.
            if affiliation < previous || occupant.role < role { occupant.role = role }
            occupants[occupant.nick] = occupant
            out += presence(of: occupant, to: nicks.keys, note: note)
            if wasModerator != (occupant.role == .moderator) { out += occupantList(for: occupant) }
        }
        return out
    }

    /// The message telling of an absent user's new affiliation (XEP-0045
    /// §9: the service informs occupants when the user is not in the room).
    private func announcement(_ affiliation: MUCAffiliation, of user: JID, reason: String?) -> Element {
        var item = Element(
            "item", namespace: NS.mucUser, attributes: ["jid": user.description, "affiliation": affiliation.rawValue])
        if let reason { item.append(Element("reason", namespace: NS.mucUser, children: [.text(reason)])) }
        var x = Element("x", namespace: NS.mucUser)
        if affiliation == .outcast {
            x.append(Status.banned.element)
        }
        x.append(item)
        return Element("message", namespace: NS.client, attributes: ["from": jid.description], children: [.element(x)])
    }

    /// Everyone else's presence again for `occupant`'s resources, once it
    /// became or stopped being a moderator in a semi-anonymous room: what
    /// it may see of their real JIDs changed (§9.6, §9.7).
    private func occupantList(for occupant: MUCOccupant) -> [MUCDelivery] {
        guard !configuration.isNonAnonymous else { return [] }
        var out: [MUCDelivery] = []
        for resource in occupant.resources {
            let shows = seesJIDs(resource)
            for other in occupants.values where other.nick != occupant.nick && broadcasts(other) {
                let element = presence(of: other, showing: shows ? realJIDs(of: other) : [], statuses: [])
                out.append(MUCDelivery(to: resource, element: element))
            }
        }
        return out
    }

    /// The `<item/>`s of the users with `affiliation` (§9.5, §10.5), for
    /// `requester`.
    ///
    /// - Throws: `forbidden` unless `requester` is an admin or owner and
    ///   asks for an affiliation not above its own, or, in a members-only
    ///   room where everyone sees real JIDs, a member.
    func items(with affiliation: MUCAffiliation, for requester: JID) throws(StanzaError) -> [Element] {
        let own = self.affiliation(of: requester)
        let allowed =
            (own >= .admin && own >= affiliation)
            || (configuration.membersOnly && configuration.isNonAnonymous && own >= .member)
        guard allowed else { throw StanzaError(.forbidden, type: .auth, text: "you may not see this list") }
        return affiliations.filter { $0.value.affiliation == affiliation }
            .sorted { $0.key.description < $1.key.description }
            .map { user, record in
                var item = Element(
                    "item", namespace: NS.mucAdmin,
                    attributes: ["affiliation": affiliation.rawValue, "jid": user.description])
                item[attribute: "nick"] = record.nick
                if let reason = record.reason {
                    item.append(Element("reason", namespace: NS.mucAdmin, children: [.text(reason)]))
                }
                return item
            }
    }

    /// The `<item/>`s of the occupants with `role` (§8.5, §9.8), for
    /// `requester`.
    ///
    /// - Throws: `forbidden` unless `requester` is a moderator in the room.
    func items(with role: MUCRole, for requester: JID) throws(StanzaError) -> [Element] {
        guard occupant(joinedFrom: requester)?.role == .moderator else {
            throw StanzaError(.forbidden, type: .auth, text: "only moderators may see this list")
        }
        return occupants.values.filter { $0.role == role }.sorted { $0.nick < $1.nick }.map { occupant in
            var item = Element(
                "item", namespace: NS.mucAdmin,
                attributes: [
                    "affiliation": occupant.affiliation.rawValue, "role": role.rawValue, "nick": occupant.nick,
                ])
            item[attribute: "jid"] = occupant.resources.first?.description
            return item
        }
    }
}
