import XMPPCore

/// Registration with a room (XEP-0045 §7.10): a member reserves its
/// nickname, which no one else may then use in the room, and may cancel
/// its registration. Only users with an affiliation may register: the
/// service does not make strangers members.
extension MUCRoom {
    /// The registration form for `requester` (§7.10), carrying
    /// `<registered/>` and its nickname when it has one.
    ///
    /// - Throws: `registration-required` for a user without affiliation.
    func registrationForm(for requester: JID) throws(StanzaError) -> Element {
        let user = requester.bare
        guard let record = affiliations[user], record.affiliation >= .member else {
            throw StanzaError(.registrationRequired, type: .auth, text: "only members may register with this room")
        }
        var query = Element("query", namespace: NS.register)
        if record.nick != nil { query.append(Element("registered", namespace: NS.register)) }
        let nick = DataForm.Field(
            "muc#register_roomnick", type: "text-single", label: "Nickname", values: record.nick.map { [$0] } ?? [],
            extras: [Element("required", namespace: NS.dataForms)])
        let form = DataForm(
            type: "form", fields: [DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.mucRegister]), nick])
        query.append(form.element)
        return query
    }

    /// Registers `requester` under the nickname its submitted `query`
    /// names, or cancels its registration on `<remove/>` (its affiliation
    /// goes), with what `setAffiliation` sends.
    ///
    /// - Throws: `registration-required` for a user without affiliation,
    ///   `bad-request` for a form without nickname, `conflict` when
    ///   another user registered it, and what `setAffiliation` throws.
    mutating func register(_ requester: JID, _ query: Element, limit: Int) throws(StanzaError) -> [MUCDelivery] {
        let user = requester.bare
        let current = affiliation(of: user)
        guard current >= .member else {
            throw StanzaError(.registrationRequired, type: .auth, text: "only members may register with this room")
        }
        if query.child("remove", namespace: NS.register) != nil {
            // A member stops being one; an admin or owner only gives up
            // the nickname.
            guard current == .member else {
                affiliations[user]?.nick = nil
                revision += 1
                return []
            }
            return try setAffiliation(.none, of: user, by: nil, reason: nil, limit: limit)
        }
        guard let form = query.child("x", namespace: NS.dataForms).flatMap(DataForm.init),
            form.formType == nil || form.formType == NS.mucRegister,
            let nick = form.fields.first(where: { $0.name == "muc#register_roomnick" })?.values.first, !nick.isEmpty,
            let address = try? JID(localpart: jid.localpart, domainpart: jid.domainpart, resourcepart: nick),
            address.resourcepart == nick
        else {
            throw StanzaError(.badRequest, type: .modify, text: "registering takes a valid muc#register_roomnick")
        }
        if affiliations.contains(where: { $0.key != user && $0.value.nick == nick })
            || occupants[nick].map({ $0.user != user }) == true
        {
            throw StanzaError(.conflict, type: .cancel, text: "someone else has or registered this nickname")
        }
        return try setAffiliation(current, of: user, by: nil, reason: nil, nick: nick, limit: limit)
    }

    /// The nickname `requester` registered, for disco#info of the node
    /// `x-roomuser-item` (§7.10.1), or nil.
    func registeredNick(of requester: JID) -> String? {
        affiliations[requester.bare]?.nick
    }
}
