import XMPPCore

/// XEP-0045: Multi-User Chat, a group chat service at
/// `conference.<domain>` (`muc_domain`). Rooms live in memory; persistent
/// ones are also kept in storage and come back after a restart.
///
/// | to the service or a room                        | answer                                      |
/// |-------------------------------------------------|---------------------------------------------|
/// | presence to `room@service/nick`                 | join (§7.2), creating a locked room owned by the user (201) when it does not exist; presence update (§7.7), nickname change (§7.6), or leaving (§7.14) for an occupant |
/// | presence to a room without nickname             | `jid-malformed` (§7.2.1); unavailable leaves |
/// | groupchat message to a room                     | to every occupant (§7.4); `<subject/>` alone changes the subject (§8.1) |
/// | chat or normal message to `room@service/nick`   | to that occupant's resources (§7.5)         |
/// | `<invite/>`, `<decline/>` to a room             | passed on by the room (§7.8.2, §7.8.3)      |
/// | a message from someone not in the room          | `not-acceptable`                            |
/// | `muc#owner` get or set                          | configuration form, submit, cancel, destroy (§10) |
/// | `muc#admin` get or set                          | lists, roles and affiliations (§8, §9)      |
/// | `jabber:iq:register` to a room                  | registration of a member's nickname (§7.10) |
/// | archive query or moderation to a room           | XEP-0313 §6 (`MUCArchive`), XEP-0425 (`MUCModeration`) |
/// | disco#info and disco#items of service and rooms | §6, and the `x-roomuser-item` node (§7.10.1) |
/// | IQs to occupants                                | `not-acceptable` for strangers; self-ping (XEP-0410); a vCard get answered with the user's vCard; others `feature-not-implemented` |
///
/// An occupant whose session ends, or who goes unavailable, leaves every
/// room. Limits: `muc_max_occupants`, `muc_max_rooms_per_user`,
/// `muc_max_affiliations`, `muc_max_room_name_length`,
/// `muc_max_nick_length`, `muc_history_length`, `muc_max_stanza_size`;
/// `muc_room_creators` names who may create rooms.
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
                maxRoomsPerUser: config.muc.maxRoomsPerUser, maxAffiliations: config.muc.maxAffiliations,
                creators: Set(config.muc.roomCreators.compactMap { try? JID($0).bare })),
            archive: MUCArchive(maxMessages: config.muc.archiveMaxMessages, retention: config.archive.retention))
    }

    public func install(_ hooks: Hooks) {
        hooks.addServiceDomain(service)
        guard enabled else { return }
        hooks.advertiseItem(DiscoItem(jid: service, name: Self.name))
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.service(service)], Self.serviceInfo)
        hooks.onIQ(.get, NS.discoItems, "query", to: [.service(service)], roomList)
        hooks.onAnyIQ(at: service, answer)
        hooks.onStart(start)
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

    /// Keys the occupant ids, starts the room archives, and brings back
    /// the persistent rooms with their history from their archives, in a
    /// storage job that (submitted at start) runs before any session's,
    /// then writes changes.
    private func start(_ server: ServerContext) {
        let (rooms, service, log) = (rooms, service, server.log)
        rooms.occupantIDs.configure(secret: server.scramSecret)
        archive.start(server, clock: clock)
        rooms.persistence.attach(to: server)
        server.storage.run(on: server.loop, { stores in
            var restored = MUCPersistence.restore(
                try stores.mucRooms.rooms(), service: service, occupantIDs: rooms.occupantIDs, log: log)
            for index in restored.indices where restored[index].archives {
                try rooms.archive.fillHistory(of: &restored[index], from: stores)
            }
            rooms.restore(restored)
        }) { result in
            if case .failure(let error) = result { log.error("cannot load the persistent rooms: \(error)") }
        }
    }

    /// Sends what a room change caused, each copy addressed here, outside
    /// the rooms' lock: to a joined resource, or to each available
    /// resource of a bare JID; a message for a local user with none (an
    /// invitation) waits in offline storage.
    static func send(_ deliveries: [MUCDelivery], on server: ServerContext) {
        for delivery in deliveries {
            guard delivery.to.isBare else {
                server.sessions.session(delivery.to)?.deliver(delivery.element.addressed(to: delivery.to))
                if delivery.mentionsRecipient {
                    server.hooks.fire(GroupChatMention(occupant: delivery.to, message: delivery.element, server: server))
                }
                continue
            }
            let recipients = server.sessions.topPriorityResources(of: delivery.to)
            for handle in recipients { handle.deliver(delivery.element.addressed(to: handle.jid)) }
            let element = delivery.element.addressed(to: delivery.to)
            if recipients.isEmpty, delivery.to.domainpart == server.domain, let message = Message(element) {
                server.hooks.messageOffline(
                    UndeliveredMessage(message: message, original: element, user: delivery.to, waitingSender: nil, server: server))
            }
        }
    }

    // MARK: - IQs

    /// Any IQ to the service or a room that no other handler takes.
    private func answer(_ request: IQRequest) throws -> IQAnswer {
        let target = request.target
        guard let name = target.localpart else {
            throw StanzaError(.featureNotImplemented, text: "not supported by this group chat service")
        }
        guard let sender = request.session.jid else { throw StanzaError(.notAuthorized) }
        let payload = request.iq.payload!
        if let nick = target.resourcepart { return try occupantQuery(request, room: name, nick: nick, sender: sender) }
        let limit = rooms.limits.maxAffiliations
        let configurationLimits = rooms.configurationLimits
        let isSet = request.iq.type == .set
        // What an owner or admin sets is kept, and names go into disco.
        if isSet { try checkSize(request.iq.element) }
        // A change is answered once what storage keeps of a persistent
        // room is written: the empty job waits behind the room's own.
        func change(
            then notices: @escaping () -> [MUCDelivery] = { [] },
            _ body: (inout MUCRoom) throws(StanzaError) -> [MUCDelivery]
        ) throws -> IQAnswer {
            guard let out = try rooms.change(name, body) else {
                throw StanzaError(.itemNotFound, text: "no such room")
            }
            Self.send(out, on: request.server)
            return .afterStorage({ _ in }) { .result(nil) { Self.send(notices(), on: request.server) } }
        }
        func read(_ body: (borrowing MUCRoom) throws(StanzaError) -> Element?) throws -> IQAnswer {
            guard let answer = try rooms.read(name, body) else {
                throw StanzaError(.itemNotFound, text: "no such room")
            }
            return .result(answer)
        }
        switch (payload.namespace, payload.name, isSet) {
        case (NS.mam, _, _), (NS.messageModerate, _, _):
            guard let room = rooms.room(name) else { throw StanzaError(.itemNotFound, text: "no such room") }
            guard let answer = try archiveAnswer(request, room: room) else {
                throw StanzaError(.featureNotImplemented, text: "not supported by this group chat service")
            }
            return answer
        case (NS.discoInfo, "query", false), (NS.discoItems, "query", false):
            return try read { room throws(StanzaError) in try self.roomQuery(request, room: room, sender: sender) }
        case (NS.mucOwner, "query", false):
            return try read { room throws(StanzaError) in
                try room.checkOwner(sender)
                let form = room.configuration.form(
                    room: room.jid, maxUsersLimit: configurationLimits.maxUsers,
                    historyLimit: configurationLimits.historyLength)
                return Element("query", namespace: NS.mucOwner, children: [.element(form.element)])
            }
        case (NS.mucOwner, "query", true):
            // The answer, then the notices of what changed (§10.2.1).
            let notices = MUCNotices()
            return try change(then: { notices.deliveries }) { room throws(StanzaError) in
                try room.checkOwner(sender)
                return try Self.own(&room, payload, limits: configurationLimits, notices: &notices.deliveries)
            }
        case (NS.mucAdmin, "query", false):
            return try read { room throws(StanzaError) in try Self.list(room, payload, for: sender) }
        case (NS.mucAdmin, "query", true):
            return try change { room throws(StanzaError) in
                try Self.administer(&room, payload, by: sender, limit: limit)
            }
        case (NS.register, "query", false):
            return try read { room throws(StanzaError) in try room.registrationForm(for: sender) }
        case (NS.register, "query", true):
            return try change { room throws(StanzaError) in try room.register(sender, payload, limit: limit) }
        default:
            guard try rooms.read(name, { _ in true }) != nil else {
                throw StanzaError(.itemNotFound, text: "no such room")
            }
            throw StanzaError(.featureNotImplemented, text: "not supported by this group chat service")
        }
    }

    /// An IQ to an occupant (§7.3 and XEP-0410): only occupants may
    /// address occupants; a ping to one's own nickname says whether one is
    /// still in; a vCard get is answered with the occupant's user's vCard
    /// (XEP-0153 avatars in rooms; every occupant is a user of this
    /// server), from its room address, only its photo for those who do not
    /// see real JIDs.
    private func occupantQuery(_ request: IQRequest, room name: String, nick: String, sender: JID) throws -> IQAnswer {
        let payload = request.iq.payload!
        let found = try rooms.read(name) { room throws(StanzaError) -> (isSelf: Bool, user: JID, seesJIDs: Bool) in
            guard let own = room.nicks[sender] else {
                throw StanzaError(.notAcceptable, text: "only occupants may address occupants")
            }
            guard let occupant = room.occupants[nick] else {
                throw StanzaError(.itemNotFound, text: "no one has this nickname")
            }
            return (nick == own, occupant.user, room.seesJIDs(sender))
        }
        guard let found else { throw StanzaError(.itemNotFound, text: "no such room") }
        switch (request.iq.type, payload.namespace, payload.name) {
        case (.get, NS.ping, "ping") where found.isSelf:
            return .result(nil)
        case (.get, NS.vcard, "vCard"):
            guard let username = found.user.localpart, found.user.domainpart == request.server.domain else {
                throw StanzaError(.serviceUnavailable)
            }
            // Who cannot see real JIDs gets the photo alone: the rest of a
            // vCard would say who the occupant is.
            return VCardTemp.vCard(of: username, for: sender, keeping: found.seesJIDs ? nil : ["PHOTO"])
        default:
            throw StanzaError(.featureNotImplemented, text: "not supported by this group chat service")
        }
    }

    /// An owner's `muc#owner` set (§10): a submitted form (whose
    /// notices go in `notices`), a cancelled one (which ends a room still
    /// locked, §10.1.3), or `<destroy/>`.
    private static func own(
        _ room: inout MUCRoom, _ query: Element, limits: MUCRoom.ConfigurationLimits, notices: inout [MUCDelivery]
    ) throws(StanzaError) -> [MUCDelivery] {
        if let destroy = query.child("destroy", namespace: NS.mucOwner) {
            let alternate = destroy[attribute: "jid"].flatMap { try? JID($0) }
            return room.destroy(alternate: alternate, reason: destroy.child("reason", namespace: NS.mucOwner)?.text)
        }
        guard let x = query.child("x", namespace: NS.dataForms), let form = DataForm(x) else {
            throw StanzaError(.badRequest, type: .modify, text: "expected a data form or <destroy/>")
        }
        switch form.type {
        case "submit":
            return try room.configure(with: form, limits: limits, notices: &notices)
        case "cancel":
            return room.isLocked ? room.destroy(alternate: nil, reason: nil) : []
        default:
            throw StanzaError(.badRequest, type: .modify, text: "expected a submitted or cancelled form")
        }
    }

    /// A `muc#admin` set (§8, §9): each `<item/>` changes a role (by
    /// `nick`) or an affiliation (by `jid`, or the `nick` of an occupant),
    /// all or none of them.
    private static func administer(_ room: inout MUCRoom, _ query: Element, by actor: JID, limit: Int)
        throws(StanzaError) -> [MUCDelivery]
    {
        let items = query.elements.filter { $0.name == "item" && $0.namespace == NS.mucAdmin }
        guard !items.isEmpty else { throw StanzaError(.badRequest, text: "expected at least one <item/>") }
        var changed = room
        var out: [MUCDelivery] = []
        for item in items {
            let reason = item.child("reason", namespace: NS.mucAdmin)?.text
            let nick = item[attribute: "nick"]
            switch (item[attribute: "role"].map(MUCRole.init), item[attribute: "affiliation"].map(MUCAffiliation.init)) {
            case (let role??, nil):
                guard let target = nick ?? item[attribute: "jid"].flatMap({ try? JID($0) }).flatMap({ changed.occupant(of: $0)?.nick })
                else { throw StanzaError(.badRequest, text: "a role change names the occupant's nick") }
                out += try changed.setRole(role, of: target, by: actor, reason: reason)
            case (nil, let affiliation??):
                let user: JID
                if let jid = item[attribute: "jid"] {
                    guard let parsed = try? JID(jid), parsed.resourcepart == nil else {
                        throw StanzaError(.jidMalformed, type: .modify, text: "an affiliation is set for a bare JID")
                    }
                    user = parsed
                } else if let nick, let occupant = changed.occupants[nick] {
                    user = occupant.user
                } else {
                    throw StanzaError(.badRequest, text: "an affiliation change names a JID")
                }
                out += try changed.setAffiliation(
                    affiliation, of: user, by: actor, reason: reason, nick: item[attribute: "jid"] == nil ? nil : nick,
                    limit: limit)
            default:
                throw StanzaError(.badRequest, text: "each <item/> changes one known role or affiliation")
            }
        }
        room = changed
        return out
    }

    /// A `muc#admin` get (§8.5, §9.5, §10.5): the occupants with a role,
    /// or the users with an affiliation.
    private static func list(_ room: borrowing MUCRoom, _ query: Element, for requester: JID) throws(StanzaError)
        -> Element
    {
        guard let item = query.child("item", namespace: NS.mucAdmin) else {
            throw StanzaError(.badRequest, text: "expected an <item/> with a role or an affiliation")
        }
        let items: [Element]
        switch (item[attribute: "role"].map(MUCRole.init), item[attribute: "affiliation"].map(MUCAffiliation.init)) {
        case (let role??, nil): items = try room.items(with: role, for: requester)
        case (nil, let affiliation??): items = try room.items(with: affiliation, for: requester)
        default: throw StanzaError(.badRequest, text: "expected an <item/> with a known role or affiliation")
        }
        return Element("query", namespace: NS.mucAdmin, children: items.map { .element($0) })
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
                let x = element.child("x", namespace: NS.muc)
                let out: [MUCDelivery]?
                if joined == nil || (joined == nick && x != nil) {
                    let request = MUCRoom.JoinRequest(
                        presence: element, password: x?.child("password", namespace: NS.muc)?.text,
                        history: MUCHistory.Request(x?.child("history", namespace: NS.muc), now: clock.milliseconds),
                        knowsMUC: x != nil)
                    out = try rooms.join(name, sender, nick: nick, request)
                    archive.flushSoon(after: session)
                } else if joined == nick {
                    out = try rooms.change(name) { $0.update(sender, presence: element) }
                } else {
                    out = try rooms.change(name) { room throws(StanzaError) in
                        try room.changeNick(sender, to: nick, presence: element)
                    }
                }
                Self.send(out ?? [], on: session.server)
            case .unavailable:
                let out = try rooms.change(name, leaving: sender) { $0.leave(sender, unavailable: element) }
                Self.send(out ?? [], on: session.server)
            case .error:
                let error = routed.presence.element.child("error").flatMap(StanzaError.init) ?? StanzaError(.undefinedCondition)
                let out = try rooms.change(name, leaving: sender) { $0.remove(sender, failingWith: error) }
                Self.send(out ?? [], on: session.server)
                return
            case .probe:
                guard let nick = recipient.resourcepart else { return }
                let out = try rooms.read(name) { room throws(StanzaError) in try room.probe(nick, from: sender) }
                guard let out else { throw StanzaError(.itemNotFound, text: "no such room") }
                Self.send(out, on: session.server)
            default:
                // Subscriptions: a room takes none.
                return
            }
        } catch {
            var error = error
            if error.by == nil { error.by = recipient.bare.description }
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

    /// XEP-0191 for a private message through a room, between the real
    /// JIDs: one to a user the sender blocks is refused with
    /// `not-acceptable` + `<blocked/>`, one to a user who blocks the
    /// sender with `service-unavailable`, as a chat message would be.
    private static func checkBlocking(_ deliveries: [MUCDelivery], from sender: JID, on server: ServerContext)
        throws(StanzaError)
    {
        for delivery in deliveries {
            switch server.blocklists.verdict(from: sender, to: delivery.to) {
            case .allowed: continue
            case .senderBlocksRecipient: throw Blocking.blockedError
            case .recipientBlocksSender: throw StanzaError(.serviceUnavailable)
            }
        }
    }

    private func message(_ routed: RoutedMessage) -> Handling {
        guard let name = routed.recipient.localpart else { return .passed }
        let element = routed.element
        let sender = routed.sender
        let type = Message(element)?.type
        guard type != .error else { return .handled }
        let limit = rooms.limits.maxAffiliations
        do throws(StanzaError) {
            try checkSize(element)
            let out: [MUCDelivery]?
            let x = element.child("x", namespace: NS.mucUser)
            if let nick = routed.recipient.resourcepart {
                guard type != .groupchat else {
                    throw StanzaError(.badRequest, text: "a private message is of type chat")
                }
                out = try rooms.change(name) { room throws(StanzaError) in
                    try room.privateMessage(element, from: sender, to: nick)
                }
                try Self.checkBlocking(out ?? [], from: sender, on: routed.server)
            } else if type == .groupchat {
                let now = clock.milliseconds
                out = try rooms.change(name) { room throws(StanzaError) in
                    try room.groupchat(element, from: sender, received: now, archive: archive)
                }
                archive.flushSoon(after: routed.session)
            } else if let invitations = x?.elements.filter({ $0.name == "invite" && $0.namespace == NS.mucUser }),
                !invitations.isEmpty
            {
                out = try rooms.change(name) { room throws(StanzaError) in
                    // All or none: a refused one changes nothing.
                    var changed = room
                    var out: [MUCDelivery] = []
                    for invite in invitations { out += try changed.invite(invite, in: element, from: sender, limit: limit) }
                    room = changed
                    return out
                }
            } else if let decline = x?.child("decline", namespace: NS.mucUser) {
                out = try rooms.change(name) { room throws(StanzaError) in
                    try room.decline(decline, in: element, from: sender)
                }
            } else {
                throw StanzaError(.notAcceptable, text: "messages to a room are of type groupchat")
            }
            guard let out else {
                throw StanzaError(.itemNotFound, text: "no such room")
            }
            Self.send(out, on: routed.server)
        } catch {
            routed.bounce(error)
        }
        return .handled
    }
}

/// The notices a configuration change sends after its answer, kept from
/// the change (under the rooms' lock) until the answer is out, on the
/// requester's loop.
private final class MUCNotices: @unchecked Sendable {
    // @unchecked: written in the change and read after it, on one loop.
    var deliveries: [MUCDelivery] = []
}
