import XMPPCore

/// XEP-0045 for owners, admins and moderators: creating, configuring and
/// destroying rooms (§10), changing roles and affiliations and listing
/// them (§8, §9), and inviting people (§7.8.2, XEP-0249).
extension XMPPClient {
    /// Creates `room` by joining it as `nick`, then unlocks it (§10.1): as
    /// an instant room with the service's defaults when `settings` is
    /// empty, else configured with `settings`.
    /// - Throws: `.invalidRequest` when the room already exists (we then
    ///   stay in it); what ``joinRoom(_:nick:password:history:)`` and
    ///   ``configureRoom(_:with:)`` throw.
    public func createRoom(_ room: JID, nick: String, settings: RoomSettings = RoomSettings())
        async throws(XMPPClientError)
    {
        let created = try await joinRoom(room, nick: nick, history: .none)
        guard created else { throw .invalidRequest("\(room.bare) already exists") }
        if settings.isEmpty {
            try await acceptDefaultConfiguration(of: room)
        } else {
            try await configureRoom(room, with: settings)
        }
    }

    /// Unlocks `room`, which our join just created, with the service's
    /// defaults: an instant room (§10.1.2), open to others from now on.
    public func acceptDefaultConfiguration(of room: JID) async throws(XMPPClientError) {
        try await ownerRequest(.set, to: room, form: Self.instantRoomForm)
    }

    /// The empty submitted form that accepts a new room's defaults.
    static let instantRoomForm = DataForm(type: "submit", fields: [])

    /// The request that accepts `room`'s defaults, for a room a rejoin or
    /// an autojoin created: sent without waiting for its answer.
    func instantRoomRequest(_ room: JID) -> Element {
        let query = Element("query", namespace: NS.mucOwner, children: [.element(Self.instantRoomForm.element)])
        return IQ(type: .set, to: room.bare, id: makeID(), payload: query).element
    }

    /// The room's configuration form (§10.2), as the room fills it in now.
    public func roomConfiguration(of room: JID) async throws(XMPPClientError) -> DataForm {
        let reply = try await request(.get, to: room.bare, payload: Element("query", namespace: NS.mucOwner))
        guard let form = reply.payload?.child("x", namespace: NS.dataForms).flatMap(DataForm.init) else {
            throw .stanzaError(.featureNotImplemented, text: "the room sent no configuration form")
        }
        return form
    }

    /// Changes the configuration of `room` (§10.2): fetches its form and
    /// submits `settings` with it.
    /// - Throws: `.invalidRequest` when the room's form lacks a field for
    ///   one of the settings; `.stanzaError` (`forbidden`) for a non-owner.
    public func configureRoom(_ room: JID, with settings: RoomSettings) async throws(XMPPClientError) {
        let offered = try await roomConfiguration(of: room)
        try await ownerRequest(.set, to: room, form: try settings.submission(for: offered))
    }

    /// Kicks the occupant `nick` out of `room` (role `none`, §8.2); they
    /// are told `reason`.
    public func kick(_ nick: String, from room: JID, reason: String? = nil) async throws(XMPPClientError) {
        try await setRole(.none, of: nick, in: room, reason: reason)
    }

    /// Gives the occupant `nick` of `room` a new role (§8.3-8.6, §9.6):
    /// `participant` grants voice, `visitor` revokes it, `moderator` and
    /// back, `none` kicks.
    public func setRole(_ role: RoomRole, of nick: String, in room: JID, reason: String? = nil)
        async throws(XMPPClientError)
    {
        try await adminRequest(to: room, item: ["nick": nick, "role": role.rawValue], reason: reason)
    }

    /// Bans `user` from `room` (affiliation `outcast`, §9.1).
    public func ban(_ user: JID, from room: JID, reason: String? = nil) async throws(XMPPClientError) {
        try await setAffiliation(.outcast, of: user, in: room, reason: reason)
    }

    /// Gives `user` (a bare JID) a new affiliation with `room` (§9.3-9.8,
    /// §10.3-10.7): member, admin, owner, or none to take it away.
    public func setAffiliation(
        _ affiliation: RoomAffiliation, of user: JID, in room: JID, reason: String? = nil
    ) async throws(XMPPClientError) {
        try await adminRequest(
            to: room, item: ["jid": user.bare.description, "affiliation": affiliation.rawValue], reason: reason)
    }

    /// The users with `affiliation` in `room` (§9.5, §10.5): members,
    /// admins, owners or outcasts, by bare JID, sorted, with the nickname
    /// a member registered if the room says.
    public func users(with affiliation: RoomAffiliation, in room: JID) async throws(XMPPClientError)
        -> [(jid: JID, nick: String?)]
    {
        let item = Element("item", namespace: NS.mucAdmin, attributes: ["affiliation": affiliation.rawValue])
        let reply = try await request(
            .get, to: room.bare, payload: Element("query", namespace: NS.mucAdmin, children: [.element(item)]))
        let items = reply.payload?.elements.filter { $0.name == "item" && $0.namespace == NS.mucAdmin } ?? []
        return items.compactMap { item in
            guard let jid = item[attribute: "jid"].flatMap({ try? JID($0) }) else { return nil }
            return (jid.bare, item[attribute: "nick"])
        }.sorted { $0.jid < $1.jid }
    }

    /// Destroys `room` (§10.9): every occupant is told, with `reason` and
    /// the room to go to instead, if given.
    public func destroyRoom(_ room: JID, reason: String? = nil, alternate: JID? = nil) async throws(XMPPClientError) {
        var destroy = Element("destroy", namespace: NS.mucOwner)
        if let alternate { destroy[attribute: "jid"] = alternate.bare.description }
        if let reason { destroy.append(Element("reason", namespace: NS.mucOwner, children: [.text(reason)])) }
        _ = try await request(
            .set, to: room.bare, payload: Element("query", namespace: NS.mucOwner, children: [.element(destroy)]))
    }

    /// Asks `room` to invite `user` (§7.8.2); the room passes the
    /// invitation on, with its password in a password-protected room. A
    /// refusal arrives as ``ClientEvent/messageFailed(id:from:error:)``.
    public func invite(_ user: JID, to room: JID, reason: String? = nil) async throws(XMPPClientError) {
        guard connection != nil else { throw .notConnected }
        var invite = Element("invite", namespace: NS.mucUser, attributes: ["to": user.description])
        if let reason { invite.append(Element("reason", namespace: NS.mucUser, children: [.text(reason)])) }
        var message = Message(to: room.bare, id: makeID())
        message.element.append(Element("x", namespace: NS.mucUser, children: [.element(invite)]))
        guard transmit(message.element) else { throw .invalidRequest("the reason contains characters XML cannot carry") }
    }

    /// Invites `user` into `room` ourselves (XEP-0249), passing on the
    /// room's password if we know it; works whatever the room supports.
    public func inviteDirectly(_ user: JID, to room: JID, reason: String? = nil) async throws(XMPPClientError) {
        guard connection != nil else { throw .notConnected }
        let invitation = RoomInvitation(
            room: room, inviter: account, reason: reason, password: rooms[room.bare]?.password, isDirect: true)
        var message = Message(to: user, id: makeID())
        message.element.append(invitation.directElement)
        guard transmit(message.element) else { throw .invalidRequest("the reason contains characters XML cannot carry") }
    }

    /// Sends an owner's `<query xmlns='…muc#owner'/>` with `form`.
    private func ownerRequest(_ type: IQ.IQType, to room: JID, form: DataForm) async throws(XMPPClientError) {
        let query = Element("query", namespace: NS.mucOwner, children: [.element(form.element)])
        _ = try await request(type, to: room.bare, payload: query)
    }

    /// Sends a `<query xmlns='…muc#admin'><item/></query>` set with
    /// `item`'s attributes and `reason`.
    private func adminRequest(to room: JID, item attributes: KeyValuePairs<String, String>, reason: String?)
        async throws(XMPPClientError)
    {
        var item = Element("item", namespace: NS.mucAdmin, attributes: attributes)
        if let reason { item.append(Element("reason", namespace: NS.mucAdmin, children: [.text(reason)])) }
        _ = try await request(.set, to: room.bare, payload: Element("query", namespace: NS.mucAdmin, children: [.element(item)]))
    }
}
