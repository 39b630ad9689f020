import XMPPCore

/// The presence a room sends about its occupants (XEP-0045 §7.2.3): the
/// occupant's own presence `from` its room address, with
/// `<x xmlns='…muc#user'><item affiliation role [jid]/><status/>…</x>`.
extension MUCRoom {
    /// Status codes of `<status code/>` (§15.6).
    enum Status: Int {
        /// This presence is about you.
        case selfPresence = 110
        /// The room was created by this join.
        case created = 201
        /// The occupant changed nickname (`<item nick/>` names the new one).
        case nickChanged = 303
    }

    /// How `occupant` appears: its last presence (or `unavailable`, which
    /// may carry the client's `<status/>`), from its room address, with
    /// its item showing `jid` when given, and `statuses`.
    func presence(
        of occupant: MUCOccupant, unavailable: Element? = nil, showing jid: JID?, statuses: [Status],
        newNick: String? = nil
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
                "role": unavailable == nil ? occupant.role.rawValue : "none",
            ])
        if let jid { item[attribute: "jid"] = jid.description }
        if let newNick { item[attribute: "nick"] = newNick }
        func status(_ status: Status) -> Element {
            Element("status", namespace: NS.mucUser, attributes: ["code": String(status.rawValue)])
        }
        // 110 after the item, the others before it, in Prosody's order,
        // which clients have long seen.
        var x = Element("x", namespace: NS.mucUser)
        for code in statuses where code != .selfPresence { x.append(status(code)) }
        x.append(item)
        if statuses.contains(.selfPresence) { x.append(status(.selfPresence)) }
        element.append(x)
        return element
    }

    /// Whether the resource `recipient` joined as a moderator, who sees
    /// real JIDs (a semi-anonymous room, §4.2).
    func seesJIDs(_ recipient: JID) -> Bool {
        occupant(joinedFrom: recipient)?.role == .moderator
    }

    /// `occupant`'s presence for each of `recipients`: its own resources
    /// get status 110 and their own JID besides `statuses`, moderators see
    /// its first resource's JID, the others no JID. Two copies are built
    /// for the others, whatever their number.
    func presence(
        of occupant: MUCOccupant, to recipients: some Sequence<JID>, unavailable: Element? = nil,
        statuses: [Status] = [], newNick: String? = nil
    ) -> [MUCDelivery] {
        let hidden = presence(
            of: occupant, unavailable: unavailable, showing: nil, statuses: statuses, newNick: newNick)
        let shown = presence(
            of: occupant, unavailable: unavailable, showing: occupant.resources.first, statuses: statuses,
            newNick: newNick)
        return recipients.map { recipient in
            if occupant.resources.contains(recipient) {
                let own = presence(
                    of: occupant, unavailable: unavailable, showing: recipient, statuses: statuses + [.selfPresence],
                    newNick: newNick)
                return MUCDelivery(to: recipient, element: own.addressed(to: recipient))
            }
            return MUCDelivery(to: recipient, element: (seesJIDs(recipient) ? shown : hidden).addressed(to: recipient))
        }
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
