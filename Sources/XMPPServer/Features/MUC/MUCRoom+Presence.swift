import XMPPCore

/// The presence a room sends about its occupants (XEP-0045 §7.2.3): the
/// occupant's own presence `from` its room address, with
/// `<x xmlns='…muc#user'><item affiliation role [jid]/><status/>…</x>`.
extension MUCRoom {
    /// Status codes of `<status code/>` (§15.6).
    enum Status: Int, Sendable {
        /// Everyone sees real JIDs in this room.
        case nonAnonymous = 100
        /// This presence is about you.
        case selfPresence = 110
        /// The room was created by this join.
        case created = 201
        /// The occupant was banned.
        case banned = 301
        /// The occupant changed nickname (`<item nick/>` names the new one).
        case nickChanged = 303
        /// The occupant was kicked.
        case kicked = 307
        /// The occupant lost the affiliation a members-only room requires.
        case affiliationRemoved = 321
        /// The room became members-only and the occupant is no member.
        case membersOnlyNow = 322
        /// The occupant's client failed to take the room's stanzas.
        case technicalError = 333
        /// The room's configuration changed.
        case configurationChanged = 104
        /// Archiving started, or stopped.
        case archivingOn = 170, archivingOff = 171
        /// Everyone sees real JIDs now, or only moderators.
        case nowNonAnonymous = 172, nowSemiAnonymous = 173

        /// `<status code/>`.
        var element: Element {
            Element("status", namespace: NS.mucUser, attributes: ["code": String(rawValue)])
        }
    }

    /// What a presence about an occupant says besides its state: status
    /// codes, and for a removal who did it, why, or the room's end.
    struct PresenceNote: Sendable {
        var statuses: [Status] = []
        /// The new nickname of a 303.
        var newNick: String?
        /// The nickname of the moderator who kicked, banned or changed
        /// an affiliation (§9.1), and its real JID, for those who see JIDs.
        var actor: String?
        var actorJID: JID?
        var reason: String?
        /// The `<destroy/>` of a destroyed room (§10.9).
        var destroy: Element?
    }

    /// How `occupant` appears: its last presence (or `unavailable`, which
    /// may carry the client's `<status/>`), from its room address, with an
    /// item for each of `jids` (the real JIDs shown; none: one item
    /// without), and `note` (its actor's JID when `showsActorJID`).
    func presence(
        of occupant: MUCOccupant, unavailable: Element? = nil, showing jids: [JID], note: PresenceNote,
        showsActorJID: Bool = false
    ) -> Element {
        var element = unavailable ?? occupant.presence
        element.attributes.removeAll { $0.name == "to" || $0.name == "id" }
        element[attribute: "from"] = address(of: occupant.nick).description
        if unavailable != nil { element[attribute: "type"] = "unavailable" }
        element.append(occupantIDElement(of: occupant))
        var item = Element(
            "item", namespace: NS.mucUser,
            attributes: [
                "affiliation": occupant.affiliation.rawValue,
                // A nickname change keeps the role (§7.6); a leave ends it.
                "role": unavailable == nil || note.newNick != nil ? occupant.role.rawValue : "none",
            ])
        if let newNick = note.newNick { item[attribute: "nick"] = newNick }
        if let actor = note.actor {
            var element = Element("actor", namespace: NS.mucUser, attributes: ["nick": actor])
            if showsActorJID { element[attribute: "jid"] = note.actorJID?.description }
            item.append(element)
        }
        if let reason = note.reason { item.append(Element("reason", namespace: NS.mucUser, children: [.text(reason)])) }
        let items = jids.isEmpty ? [item] : jids.map { jid in
            var shown = item
            shown[attribute: "jid"] = jid.description
            return shown
        }
        // 110 after the item, the others before it, in Prosody's order,
        // which clients have long seen.
        var x = Element("x", namespace: NS.mucUser)
        if let destroy = note.destroy { x.append(destroy) }
        for code in note.statuses where code != .selfPresence { x.append(code.element) }
        for item in items { x.append(item) }
        if note.statuses.contains(.selfPresence) { x.append(Status.selfPresence.element) }
        element.append(x)
        return element
    }

    /// `presence(of:unavailable:showing:note:)` with only status codes.
    func presence(of occupant: MUCOccupant, showing jids: [JID], statuses: [Status]) -> Element {
        presence(of: occupant, showing: jids, note: PresenceNote(statuses: statuses))
    }

    /// The real JIDs of `occupant` that those who see JIDs are shown: each
    /// of its resources, the latest to join first.
    func realJIDs(of occupant: MUCOccupant) -> [JID] {
        occupant.resources.reversed()
    }

    /// Whether the room tells everyone of `occupant`'s presence
    /// (`muc#roomconfig_presencebroadcast`); its own resources always
    /// hear of it.
    func broadcasts(_ occupant: MUCOccupant) -> Bool {
        configuration.presenceBroadcast.contains(occupant.role)
    }

    /// `occupant`'s presence for each of `recipients`: its own resources
    /// get status 110 and their own JID besides the note, those who see
    /// real JIDs its resources' JIDs and the actor's, the others no JID;
    /// only its own resources when the room does not broadcast its role.
    /// Two copies are built for the others, whatever their number.
    func presence(
        of occupant: MUCOccupant, to recipients: some Sequence<JID>, unavailable: Element? = nil,
        note: PresenceNote = PresenceNote()
    ) -> [MUCDelivery] {
        let recipients = broadcasts(occupant) ? Array(recipients) : recipients.filter(occupant.resources.contains)
        let hidden = presence(of: occupant, unavailable: unavailable, showing: [], note: note)
        let shown = presence(
            of: occupant, unavailable: unavailable, showing: realJIDs(of: occupant), note: note, showsActorJID: true)
        var own = note
        own.statuses.append(.selfPresence)
        return recipients.map { recipient in
            if occupant.resources.contains(recipient) {
                let element = presence(of: occupant, unavailable: unavailable, showing: [recipient], note: own)
                return MUCDelivery(to: recipient, element: element)
            }
            return MUCDelivery(to: recipient, element: (seesJIDs(recipient) ? shown : hidden))
        }
    }
}

extension MUCRoom {
    /// The answer to a presence probe `resource` sent to `nick` (as
    /// Prosody does): the occupant's presence as `resource` sees it, or for
    /// a member who registered `nick` and is not in, an unavailable one.
    ///
    /// - Throws: `not-acceptable` for a prober not in the room,
    ///   `item-not-found` for a nickname neither in use nor registered.
    func probe(_ nick: String, from resource: JID) throws(StanzaError) -> [MUCDelivery] {
        guard occupant(joinedFrom: resource) != nil else {
            throw StanzaError(.notAcceptable, type: .cancel, text: "only occupants may probe occupants")
        }
        let shows = seesJIDs(resource)
        if let occupant = occupants[nick], broadcasts(occupant) || seesJIDs(resource) {
            let element = presence(of: occupant, showing: shows ? realJIDs(of: occupant) : [], statuses: [])
            return [MUCDelivery(to: resource, element: element)]
        }
        guard occupants[nick] == nil,
            let (user, record) = affiliations.first(where: { $0.value.nick == nick && $0.value.affiliation >= .member })
        else {
            throw StanzaError(.itemNotFound, type: .cancel, text: "no one has or registered this nickname")
        }
        return [MUCDelivery(to: resource, element: absentMember(user, record, shown: shows))]
    }

    /// The unavailable presence of a member who registered a nickname and
    /// is not in the room, with its bare JID when `shown`.
    func absentMember(_ user: JID, _ record: MUCAffiliationRecord, shown: Bool) -> Element {
        var item = Element(
            "item", namespace: NS.mucUser,
            attributes: ["affiliation": record.affiliation.rawValue, "role": MUCRole.none.rawValue])
        item[attribute: "nick"] = record.nick
        if shown { item[attribute: "jid"] = user.description }
        return Element(
            "presence", namespace: NS.client,
            attributes: ["from": address(of: record.nick ?? "").description, "type": "unavailable"],
            children: [.element(Element("x", namespace: NS.mucUser, children: [.element(item)]))])
    }

    /// For a newcomer, when the room broadcasts the role `none`: the
    /// members who registered a nickname and are not in.
    func absentMembers(for resource: JID) -> [MUCDelivery] {
        guard configuration.presenceBroadcast.contains(.none) else { return [] }
        let shown = seesJIDs(resource)
        return affiliations.filter { $0.value.affiliation >= .member && ($0.value.nick.map { occupants[$0] == nil } ?? false) }
            .sorted { $0.key.description < $1.key.description }
            .map { MUCDelivery(to: resource, element: absentMember($0.key, $0.value, shown: shown)) }
    }
}

extension Element {
    /// A client's presence as a room keeps it: without `to`, `id` and the
    /// join request's `<x xmlns='…muc'/>`.
    var asOccupantPresence: Element {
        var element = self
        element.attributes.removeAll { $0.name == "to" || $0.name == "id" || $0.name == "from" }
        element.removeChildren("x", namespace: NS.muc)
        element.removeChildren("x", namespace: NS.mucUser)
        return element.withoutOccupantIDs
    }
}
