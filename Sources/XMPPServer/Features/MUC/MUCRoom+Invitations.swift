import XMPPCore

/// Mediated invitations and declines (XEP-0045 §7.8.2, §7.8.3): an
/// occupant asks the room to invite someone; the room passes it on in
/// its own name, and passes a decline back.
extension MUCRoom {
    /// The invitation in `message` (`<x xmlns='…muc#user'><invite to/>`)
    /// from `sender` (its full JID), sent on by the room to the invitee,
    /// `from` the room, with the inviter (its room address unless real
    /// JIDs are shown), the reason, the password, a body for clients that
    /// know no invitations, and an XEP-0249 element for those that know
    /// only that. In a members-only room the invitee becomes a member
    /// (§7.8.2: the service may add it).
    ///
    /// - Throws: `not-acceptable` for a sender not in the room;
    ///   `jid-malformed` for a bad invitee; `forbidden` for a
    ///   visitor, or in a members-only room for someone
    ///   below admin, or below member when occupants may invite (§7.8.2);
    ///   `resource-constraint` when the room keeps `limit` affiliations.
    mutating func invite(_ invite: Element, in message: Element, from sender: JID, limit: Int) throws(StanzaError)
        -> [MUCDelivery]
    {
        guard let to = invite[attribute: "to"], let invitee = try? JID(to) else {
            throw StanzaError(.jidMalformed, type: .modify, text: "an invitation needs a valid 'to'")
        }
        // Only occupants invite: the invitation carries the room's password.
        guard let inviter = occupant(joinedFrom: sender) else {
            throw StanzaError(.notAcceptable, type: .cancel, text: "only occupants may invite people to the room")
        }
        let affiliation = affiliation(of: sender)
        guard inviter.role > .visitor else {
            throw StanzaError(.forbidden, type: .auth, text: "you may not invite people to this room")
        }
        if configuration.membersOnly {
            let required: MUCAffiliation = configuration.occupantsMayInvite ? .member : .admin
            guard affiliation >= required else {
                throw StanzaError(.forbidden, type: .auth, text: "you may not invite people to this members-only room")
            }
            if self.affiliation(of: invitee) == .none {
                guard affiliations.count < limit else {
                    throw StanzaError(.resourceConstraint, type: .wait, text: "a room keeps at most \(limit) affiliations")
                }
                affiliations[invitee.bare] = MUCAffiliationRecord(affiliation: .member)
                revision += 1
            }
        }
        let from = configuration.isNonAnonymous ? sender : address(of: inviter.nick)
        let reason = invite.child("reason", namespace: NS.mucUser)?.text ?? ""
        var x = Element("x", namespace: NS.mucUser)
        x.append(
            Element(
                "invite", namespace: NS.mucUser, attributes: ["from": from.description],
                children: [.element(Element("reason", namespace: NS.mucUser, children: [.text(reason)]))]))
        if !configuration.password.isEmpty {
            x.append(Element("password", namespace: NS.mucUser, children: [.text(configuration.password)]))
        }
        var out = passedOn(message, to: invitee)
        out.append(x)
        out.append(
            Element(
                "body", namespace: NS.client,
                children: [.text("\(from) invited you to the room \(jid)" + (reason.isEmpty ? "" : " (\(reason))"))]))
        var direct = Element("x", namespace: NS.conferenceInvitation, attributes: ["jid": jid.description])
        if !reason.isEmpty { direct[attribute: "reason"] = reason }
        out.append(direct)
        return [MUCDelivery(to: invitee, element: out)]
    }

    /// The decline in `message` (`<x xmlns='…muc#user'><decline to/>`)
    /// from `sender`, sent on to the inviter it names (a room address
    /// reaches that occupant's resources), `from` the room (§7.8.3).
    ///
    /// - Throws: `jid-malformed` for a bad inviter address.
    func decline(_ decline: Element, in message: Element, from sender: JID) throws(StanzaError) -> [MUCDelivery] {
        guard let to = decline[attribute: "to"], let inviter = try? JID(to) else {
            throw StanzaError(.jidMalformed, type: .modify, text: "a decline needs a valid 'to'")
        }
        let reason = decline.child("reason", namespace: NS.mucUser)?.text ?? ""
        var out = passedOn(message, to: inviter)
        out.append(
            Element(
                "x", namespace: NS.mucUser,
                children: [
                    .element(
                        Element(
                            "decline", namespace: NS.mucUser, attributes: ["from": sender.bare.description],
                            children: [.element(Element("reason", namespace: NS.mucUser, children: [.text(reason)]))]))
                ]))
        out.append(
            Element(
                "body", namespace: NS.client,
                children: [.text("\(sender.bare) declined your invitation to the room \(jid)" + (reason.isEmpty ? "" : " (\(reason))"))]))
        if inviter.bare == jid, let nick = inviter.resourcepart, let occupant = occupants[nick] {
            return occupant.resources.map { MUCDelivery(to: $0, element: out) }
        }
        return [MUCDelivery(to: inviter, element: out)]
    }

    /// `message` as the room passes it on to `recipient`: from the room,
    /// keeping its id and its children but those the room writes anew
    /// (`muc#user` and XEP-0249 elements, the body).
    private func passedOn(_ message: Element, to recipient: JID) -> Element {
        var element = Element(
            "message", namespace: NS.client, attributes: ["from": jid.description, "to": recipient.description])
        element[attribute: "id"] = message[attribute: "id"]
        let rewritten: Set<String> = [NS.mucUser, NS.conferenceInvitation]
        for child in message.elements where !rewritten.contains(child.namespace) && child.name != "body" {
            element.append(child)
        }
        return element
    }
}
