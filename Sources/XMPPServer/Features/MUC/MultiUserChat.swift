import XMPPCore

/// XEP-0045: Multi-User Chat, the core of it: a group chat service at
/// `conference.<domain>` (`muc_domain`) whose rooms live in memory.
///
/// | to the service or a room                        | answer                                      |
/// |-------------------------------------------------|---------------------------------------------|
/// | presence to `room@service/nick`                 | join (§7.2), creating an instant room owned by the user (201) when it does not exist; presence update (§7.7), nickname change (§7.6), or leaving (§7.14) for an occupant |
/// | presence to a room without nickname             | `jid-malformed` (§7.2.1)                    |
/// | groupchat message to a room                     | to every occupant (§7.4); `<subject/>` alone changes the subject (§8.1, any occupant) |
/// | chat or normal message to `room@service/nick`   | to that occupant's resources (§7.5)         |
/// | a message from someone not in the room          | `not-acceptable`                            |
/// | disco#info and disco#items of service and rooms | §6                                          |
/// | archive query or moderation to a room           | XEP-0313 §6 (`MUCArchive`), XEP-0425 (`MUCModeration`) |
/// | any other IQ (configuration, affiliations, kick, ban, registration, destroy, IQs to occupants) | `feature-not-implemented` |
/// | an invitation or decline (§7.8)                  | `feature-not-implemented`                   |
///
/// Rooms are temporary (they go with their last occupant), open,
/// unmoderated, public and semi-anonymous: moderators (the creator) see
/// occupants' real JIDs. An occupant whose session ends, or who goes
/// unavailable, leaves every room. Limits: `muc_max_occupants`,
/// `muc_max_rooms_per_user`, `muc_max_room_name_length`,
/// `muc_max_nick_length`, `muc_history_length`.
public struct MultiUserChat: ServerFeature {
    let service: String
    private let enabled: Bool
    private let maxRoomNameLength: Int
    private let maxNickLength: Int
    private let maxStanzaSize: Int
    let clock: WallClock
    let rooms: MUCRooms

    /// The feature as `config` sets it up; history is stamped with `clock`.
    public init(config: ServerConfig, clock: WallClock = .system) {
        service = config.mucService
        enabled = config.muc.enabled
        maxRoomNameLength = config.muc.maxRoomNameLength
        maxNickLength = config.muc.maxNickLength
        maxStanzaSize = config.muc.maxStanzaSize
        self.clock = clock
        rooms = MUCRooms(
            service: config.mucService,
            limits: MUCRooms.Limits(
                historyLength: config.muc.historyLength, maxOccupants: config.muc.maxOccupants,
                maxRoomsPerUser: config.muc.maxRoomsPerUser),
            archive: MUCArchive(maxMessages: config.muc.archiveMaxMessages, retention: config.archive.retention))
    }

    public func install(_ hooks: Hooks) {
        hooks.addServiceDomain(service)
        guard enabled else { return }
        hooks.advertiseItem(DiscoItem(jid: service, name: Self.name))
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.service(service)], Self.serviceInfo)
        hooks.onIQ(.get, NS.discoItems, "query", to: [.service(service)], roomList)
        hooks.onAnyIQ(at: service, answer)
        hooks.onStart { server in
            self.rooms.occupantIDs.configure(secret: server.scramSecret)
            self.archive.start(server, clock: self.clock)
        }
        hooks.onPresence([.service(service)]) { routed in
            self.presence(routed)
            return .handled
        }
        hooks.onMessage(to: [.service(service)]) { message in self.message(message) }
        hooks.onSessionEnded { session in
            guard let jid = session.jid else { return }
            Self.send(self.rooms.leaveAll(jid), on: session.server)
        }
        // A session that replaced another on the same full JID (which ends
        // without its JID) starts in no room: the old one's rooms see it go.
        hooks.onSessionBound { session in
            guard let jid = session.jid else { return }
            Self.send(self.rooms.leaveAll(jid).filter { $0.to != jid }, on: session.server)
        }
        // Ahead of the broadcast, which skips a resource that never sent
        // initial presence: going unavailable leaves every room all the same.
        hooks.onPresence([.broadcast], priority: 100) { routed in
            if routed.presence.type == .unavailable {
                Self.send(self.rooms.leaveAll(routed.sender), on: routed.session.server)
            }
            return .passed
        }
    }

    /// Sends what a room change caused to the resources it is for.
    static func send(_ deliveries: [MUCDelivery], on server: ServerContext) {
        for delivery in deliveries { server.sessions.session(delivery.to)?.deliver(delivery.element) }
    }

    // MARK: - IQs

    /// Any IQ to the service or a room that no other handler takes.
    private func answer(_ request: IQRequest) throws -> IQAnswer {
        let target = request.target
        guard let name = target.localpart else {
            throw StanzaError(.featureNotImplemented, text: "not supported by this group chat service yet")
        }
        guard let room = rooms.room(name) else { throw StanzaError(.itemNotFound, text: "no such room") }
        if target.resourcepart == nil, let answer = try archiveAnswer(request, room: room) { return answer }
        let payload = request.iq.payload!
        if target.resourcepart == nil, request.iq.type == .get,
            payload.name == "query", [NS.discoInfo, NS.discoItems].contains(payload.namespace)
        {
            return try roomQuery(request, room: room)
        }
        if target.resourcepart == nil, Self.acceptsInstantRoom(request, creator: room.creator) { return .result(nil) }
        if let nick = target.resourcepart {
            // §7.3 and XEP-0410: only occupants may address occupants, and
            // a ping to one's own nickname says whether one is still in.
            guard let sender = request.session.jid, let own = rooms.nick(of: sender, in: name) else {
                throw StanzaError(.notAcceptable, text: "only occupants may address occupants")
            }
            guard room.occupants[nick] != nil else { throw StanzaError(.itemNotFound, text: "no one has this nickname") }
            if nick == own, request.iq.type == .get, payload.name == "ping", payload.namespace == NS.ping {
                return .result(nil)
            }
        }
        throw StanzaError(.featureNotImplemented, text: "not supported by this group chat service yet")
    }

    /// Whether `request` is the owner's empty submit (or cancel) of the
    /// configuration form, which creates an instant room (§10.1.2): every
    /// room already is one, so it is answered with a result, for clients
    /// that wait for it before they call the room created.
    private static func acceptsInstantRoom(_ request: IQRequest, creator: JID) -> Bool {
        guard request.iq.type == .set, request.iq.element[attribute: "from"].flatMap({ try? JID($0) })?.bare == creator,
            let query = request.iq.payload, query.name == "query", query.namespace == NS.mucOwner,
            query.elements.count == 1, let form = query.child("x", namespace: NS.dataForms),
            form[attribute: "type"] == "submit" || form[attribute: "type"] == "cancel"
        else { return false }
        return form.elements.allSatisfy { $0[attribute: "var"] == "FORM_TYPE" }
    }

    // MARK: - Presence

    private func presence(_ routed: RoutedPresence) {
        let session = routed.session
        let sender = routed.sender
        guard let recipient = routed.recipient, let name = recipient.localpart else { return }
        let element = routed.presence.element
        do throws(StanzaError) {
            switch routed.presence.type {
            case .available:
                guard let nick = recipient.resourcepart else {
                    throw StanzaError(.jidMalformed, text: "join a room as room@service/nickname")
                }
                try checkLengths(room: name, nick: nick)
                try checkSize(element)
                let joined = rooms.nick(of: sender, in: name)
                let out: [MUCDelivery]?
                if joined == nil || (joined == nick && element.child("x", namespace: NS.muc) != nil) {
                    let history = MUCHistory.Request(
                        element.child("x", namespace: NS.muc)?.child("history", namespace: NS.muc),
                        now: clock.milliseconds)
                    out = try rooms.join(name, sender, nick: nick, presence: element, history: history)
                    archive.flushSoon(after: session)
                } else if joined == nick {
                    out = try rooms.change(name, by: sender) { $0.update(sender, presence: element) }
                } else {
                    out = try rooms.change(name, by: sender) { room throws(StanzaError) in
                        try room.changeNick(sender, to: nick, presence: element)
                    }
                }
                Self.send(out ?? [], on: session.server)
            case .unavailable:
                let out = try rooms.change(name, by: sender) { $0.leave(sender, unavailable: element) }
                Self.send(out ?? [], on: session.server)
            default:
                // Errors, subscriptions and probes: a room takes none yet.
                return
            }
        } catch {
            if let reply = routed.presence.errorReply(error) { session.send(reply) }
        }
    }

    /// Throws `not-acceptable` for a stanza over `muc_max_stanza_size`.
    private func checkSize(_ element: Element) throws(StanzaError) {
        guard let size = try? XMLSerializer.string(element).utf8.count, size <= maxStanzaSize else {
            throw StanzaError(
                .notAcceptable, type: .modify, text: "a room takes stanzas of at most \(maxStanzaSize) bytes")
        }
    }

    /// Throws `not-acceptable` for a room name or nickname over its limit.
    private func checkLengths(room name: String, nick: String) throws(StanzaError) {
        guard name.utf8.count <= maxRoomNameLength else {
            throw StanzaError(
                .notAcceptable, type: .modify, text: "a room name may have at most \(maxRoomNameLength) bytes")
        }
        guard nick.utf8.count <= maxNickLength else {
            throw StanzaError(.notAcceptable, type: .modify, text: "a nickname may have at most \(maxNickLength) bytes")
        }
    }

    // MARK: - Messages

    private func message(_ routed: RoutedMessage) -> Handling {
        guard let name = routed.recipient.localpart else { return .passed }
        let element = routed.element
        let sender = routed.sender
        let type = Message(element)?.type
        guard type != .error else { return .handled }
        do throws(StanzaError) {
            try checkSize(element)
            let out: [MUCDelivery]?
            if let nick = routed.recipient.resourcepart {
                guard type != .groupchat else {
                    throw StanzaError(.badRequest, text: "a private message is of type chat")
                }
                out = try rooms.change(name, by: sender) { room throws(StanzaError) in
                    try room.privateMessage(element, from: sender, to: nick)
                }
            } else if type == .groupchat {
                let now = clock.milliseconds
                out = try rooms.change(name, by: sender) { room throws(StanzaError) in
                    try room.groupchat(element, from: sender, received: now, archive: archive)
                }
                archive.flushSoon(after: routed.session)
            } else if element.child("x", namespace: NS.mucUser) != nil {
                throw StanzaError(.featureNotImplemented, text: "invitations are not supported yet")
            } else {
                throw StanzaError(.notAcceptable, text: "messages to a room are of type groupchat")
            }
            guard let out else {
                throw StanzaError(.notAcceptable, text: "only occupants may send messages to the room")
            }
            Self.send(out, on: routed.server)
        } catch {
            routed.bounce(error)
        }
        return .handled
    }
}
