import Foundation
import XMPPCore

/// XEP-0045 Multi-User Chat as an occupant: joining and leaving rooms,
/// their messages, occupants and subject. The rooms we are in are joined
/// again in every new session (a resumed one is still in them).
extension XMPPClient {
    /// The bare JIDs of the rooms we are in, sorted.
    public var joinedRooms: [JID] {
        rooms.filter { $0.value.isJoined }.keys.sorted()
    }

    /// Our nickname in `room`, while we are in it or joining it.
    public func nick(in room: JID) -> String? {
        rooms[room.bare]?.nick
    }

    /// The occupants of `room`, ourselves included, as its presence last
    /// described them, sorted by nickname; empty when we are not in it.
    public func occupants(of room: JID) -> [RoomOccupant] {
        (rooms[room.bare]?.occupants.values ?? [:].values).sorted { $0.nick < $1.nick }
    }

    /// The subject of `room` ("" for none), or `nil` before the room said.
    public func subject(of room: JID) -> String? {
        rooms[room.bare]?.subject
    }

    /// The rooms a group chat service lists (its disco#items, XEP-0045
    /// §6.3): each room's bare JID and name, sorted by JID.
    public func publicRooms(on service: JID) async throws(XMPPClientError) -> [(room: JID, name: String?)] {
        let reply = try await request(.get, to: service, payload: Element("query", namespace: NS.discoItems))
        let items = reply.payload?.elements.filter { $0.name == "item" && $0.namespace == NS.discoItems } ?? []
        return items.compactMap { item in
            guard let room = item[attribute: "jid"].flatMap({ try? JID($0) }) else { return nil }
            return (room.bare, item[attribute: "name"])
        }.sorted { $0.room < $1.room }
    }

    /// Joins `room` as `nick` (XEP-0045 §7.2) and waits until the room
    /// sends our own presence, after the others'. Returns whether the join
    /// created the room: a new room may stay locked to others until its
    /// owner configures it with ``configureRoom(_:with:)`` (empty settings
    /// accept the defaults); ``createRoom(_:nick:settings:)`` does both.
    /// - Throws: `.invalidRequest` when already in the room or for a
    ///   nickname a JID cannot carry; `.stanzaError` when the room refuses
    ///   (`conflict`: the nickname is taken, `not-authorized`: a password
    ///   is needed, `registration-required`: members only, `forbidden`:
    ///   banned); `.timedOut`.
    @discardableResult
    public func joinRoom(
        _ room: JID, nick: String, password: String? = nil, history: RoomHistoryRequest = RoomHistoryRequest()
    ) async throws(XMPPClientError) -> Bool {
        let room = room.bare
        guard connection != nil else { throw .notConnected }
        guard rooms[room] == nil else { throw .invalidRequest("already in \(room) or joining it") }
        let state = JoinedRoom(nick: nick, password: password, history: history)
        guard let request = state.joinRequest(to: room, presence: roomPresence) else {
            throw .invalidRequest("'\(nick)' cannot be a nickname")
        }
        rooms[room] = state
        let own = try await awaitRoom(room, .join, sending: request)
        return own.statusCodes.contains(OccupantPresence.Status.created)
    }

    /// Leaves `room` (XEP-0045 §7.14) and waits for the room to confirm.
    /// - Throws: `.invalidRequest` when we are not in it.
    public func leaveRoom(_ room: JID, status: String? = nil) async throws(XMPPClientError) {
        let room = room.bare
        guard let state = rooms[room], let address = try? room.withResource(state.nick) else {
            throw .invalidRequest("not in \(room)")
        }
        let presence = Presence(type: .unavailable, to: address, status: status)
        do {
            _ = try await awaitRoom(room, .leave, sending: presence.element)
        } catch {
            // Without an answer the room is gone from our side all the same.
            rooms[room] = nil
            throw error
        }
    }

    /// Changes our nickname in `room` (XEP-0045 §7.6) and waits for the
    /// room to confirm.
    /// - Throws: `.stanzaError` with `conflict` when someone has it.
    public func changeNick(in room: JID, to newNick: String) async throws(XMPPClientError) {
        let room = room.bare
        guard rooms[room]?.isJoined == true else { throw .invalidRequest("not in \(room)") }
        guard let address = try? room.withResource(newNick) else {
            throw .invalidRequest("'\(newNick)' cannot be a nickname")
        }
        var presence = roomPresence
        presence.element[attribute: "to"] = address.description
        _ = try await awaitRoom(room, .nickChange, sending: presence.element)
    }

    /// Sends `body` to everyone in `room` (XEP-0045 §7.4); returns the
    /// message's id. The room echoes it back, and that echo is what
    /// arrives as a ``RoomEvent/message(_:)`` and goes into the archive.
    @discardableResult
    public func sendRoomMessage(_ body: String, to room: JID) async throws(XMPPClientError) -> String {
        let room = room.bare
        guard connection != nil else { throw .notConnected }
        guard rooms[room]?.isJoined == true else { throw .invalidRequest("not in \(room)") }
        let id = makeID()
        guard transmit(Message(type: .groupchat, to: room, id: id, body: body).element) else {
            throw .invalidRequest("the text contains characters XML cannot carry")
        }
        return id
    }

    /// Sends `body` privately to the occupant `nick` of `room` through the
    /// room (XEP-0045 §7.5); returns the message's id.
    @discardableResult
    public func sendPrivateMessage(_ body: String, to nick: String, in room: JID) async throws(XMPPClientError)
        -> String
    {
        let room = room.bare
        guard connection != nil else { throw .notConnected }
        guard rooms[room]?.isJoined == true else { throw .invalidRequest("not in \(room)") }
        guard let address = try? room.withResource(nick) else { throw .invalidRequest("'\(nick)' cannot be a nickname") }
        let id = makeID()
        var message = Message(type: .chat, to: address, id: id, body: body)
        message.element.append(Element("x", namespace: NS.mucUser))
        guard transmit(message.element) else { throw .invalidRequest("the text contains characters XML cannot carry") }
        return id
    }

    /// Changes the subject of `room` (XEP-0045 §8.1); "" clears it. The
    /// room announces the change to everyone, us included; a refusal
    /// arrives as ``ClientEvent/messageFailed(id:from:error:)``.
    public func setSubject(_ subject: String, of room: JID) async throws(XMPPClientError) {
        let room = room.bare
        guard connection != nil else { throw .notConnected }
        guard rooms[room]?.isJoined == true else { throw .invalidRequest("not in \(room)") }
        var message = Message(type: .groupchat, to: room, id: makeID())
        message.element.append(Element("subject", namespace: NS.client, children: subject.isEmpty ? [] : [.text(subject)]))
        guard transmit(message.element) else { throw .invalidRequest("the text contains characters XML cannot carry") }
    }

    // MARK: - Sessions

    /// After login in a new session: joins again the rooms we were in,
    /// then those bookmarked for autojoin (XEP-0402), without waiting for
    /// the rooms' answers, which arrive as events.
    func enterRooms() async {
        for (room, state) in rooms {
            let state = state.forRejoining
            rooms[room] = state
            if let request = state.joinRequest(to: room, presence: roomPresence) { send(request) }
        }
        guard configuration.joinsBookmarkedRooms, let bookmarks = try? await bookmarks() else { return }
        for bookmark in bookmarks { autojoin(bookmark) }
    }

    /// Starts joining the room of `bookmark` when it is marked autojoin,
    /// this client joins bookmarked rooms, and we are not in it or joining
    /// it already; the answer arrives as events.
    func autojoin(_ bookmark: RoomBookmark) {
        guard configuration.joinsBookmarkedRooms, bookmark.autojoin, rooms[bookmark.room] == nil else { return }
        let state = JoinedRoom(
            nick: bookmark.nick ?? account.localpart ?? "user", password: bookmark.password,
            history: RoomHistoryRequest())
        guard let request = state.joinRequest(to: bookmark.room, presence: roomPresence) else { return }
        rooms[bookmark.room] = state
        send(request)
    }

    /// Sends our presence to the rooms we are in (XEP-0045 §7.7), which
    /// do not get what we broadcast to contacts.
    func sendPresenceToRooms() {
        for (room, state) in rooms where state.isJoined {
            guard let address = try? room.withResource(state.nick) else { continue }
            var presence = roomPresence
            presence.element[attribute: "to"] = address.description
            send(presence.element)
        }
    }

    /// Our presence for rooms: the one we show, but available even while
    /// we stay unseen by contacts, since a room only counts occupants who
    /// are available.
    private var roomPresence: Presence {
        var presence = ownPresence
        if presence.type == .unavailable { presence = Presence() }
        return stamped(presence)
    }

    // MARK: - Waiting for the room

    /// Sends `stanza` to `room` and waits for the answer `goal` needs: our
    /// own presence from the room, or an error.
    private func awaitRoom(_ room: JID, _ goal: RoomWaiter.Goal, sending stanza: Element) async throws(XMPPClientError)
        -> OccupantPresence
    {
        guard roomWaiters[room] == nil else {
            if goal == .join { rooms[room] = nil }
            throw .invalidRequest("an earlier request to \(room) still waits for its answer")
        }
        let (clock, timeout) = (configuration.clock, configuration.timeout)
        do {
            return try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<OccupantPresence, any Error>) in
                let deadline = Task {
                    do { try await clock.sleep(for: timeout) } catch { return }
                    self.finishRoomWait(room, with: .failure(.timedOut))
                }
                roomWaiters[room] = RoomWaiter(goal: goal, waiter: waiter, deadline: deadline)
                if !transmit(stanza) { finishRoomWait(room, with: .failure(.notConnected)) }
            }
        } catch let error as XMPPClientError {
            if goal == .join, rooms[room]?.isJoined == false { rooms[room] = nil }
            throw error
        } catch {
            throw .notConnected
        }
    }

    /// Ends the wait on `room`, if any, with `outcome`.
    func finishRoomWait(_ room: JID, with outcome: Result<OccupantPresence, XMPPClientError>) {
        guard let waiting = roomWaiters.removeValue(forKey: room) else { return }
        waiting.deadline.cancel()
        waiting.waiter.resume(with: outcome)
    }

    // MARK: - Receiving

    /// Takes a presence from a room we are in or joining: an occupant's
    /// (ours included), or an error for our last request. Returns whether
    /// `presence` came from such a room, or from one we already left (it
    /// carries a `muc#user` element), which is not a contact's.
    func handleRoomPresence(_ presence: Presence) -> Bool {
        guard let from = presence.from, let state = rooms[from.bare] else {
            return presence.element.child("x", namespace: NS.mucUser) != nil
        }
        let room = from.bare
        if presence.type == .error {
            let error = XMPPClientError.stanzaError(
                presence.error?.condition ?? .undefinedCondition, text: presence.error?.text)
            if !state.isJoined { rooms[room] = nil }
            if roomWaiters[room] != nil {
                finishRoomWait(room, with: .failure(error))
            } else if !state.isJoined {
                broadcaster.publish(.room(.joinFailed(room: room, error: error)))
            }
            return true
        }
        guard let update = OccupantPresence(presence) else { return true }
        let nick = update.occupant.nick
        let knownBefore = update.isSelf && !state.isJoined ? false : state.occupants[nick] != nil
        apply(update, to: room)
        broadcaster.publish(.room(update.event(knownBefore: knownBefore)))
        // A rejoin or an autojoin that created the room (no one waits for
        // it) opens it with the defaults, so that the others may enter.
        if update.isSelf, update.statusCodes.contains(OccupantPresence.Status.created), roomWaiters[room] == nil {
            send(instantRoomRequest(room))
        }
        if update.isSelf { answerRoomWaiter(room, with: update) }
        return true
    }

    /// Updates what we know of `room` with `update`.
    private func apply(_ update: OccupantPresence, to room: JID) {
        let nick = update.occupant.nick
        if update.isSelf, !update.isAvailable, !update.isNickChange {
            rooms[room] = nil
            return
        }
        if update.isNickChange, let newNick = update.newNick {
            // Known under the new nickname from now on, so that its
            // presence there reads as a change, not a newcomer.
            if var moved = rooms[room]?.occupants.removeValue(forKey: nick), let address = try? room.withResource(newNick) {
                moved.address = address
                rooms[room]?.occupants[newNick] = moved
            }
            if update.isSelf { rooms[room]?.nick = newNick }
        } else if update.isAvailable {
            rooms[room]?.occupants[nick] = update.occupant
            if update.isSelf { rooms[room]?.isJoined = true }
        } else {
            rooms[room]?.occupants[nick] = nil
        }
    }

    /// Answers the wait on `room` with our own presence `update` when it is
    /// what the wait is for.
    private func answerRoomWaiter(_ room: JID, with update: OccupantPresence) {
        guard let goal = roomWaiters[room]?.goal else { return }
        switch goal {
        case .join, .nickChange:
            if update.isAvailable {
                finishRoomWait(room, with: .success(update))
            } else if !update.isNickChange {
                finishRoomWait(room, with: .failure(.invalidRequest("the room removed us")))
            }
        case .leave:
            if !update.isAvailable, !update.isNickChange { finishRoomWait(room, with: .success(update)) }
        }
    }

    /// Takes an invitation, or a message from a room we are in: a
    /// subject, a message to everyone (archived, keyed by the room), or a
    /// private one (not archived). Returns whether `message` was one.
    func handleRoomMessage(_ message: Message) async -> Bool {
        guard let from = message.from else { return false }
        if let invitation = RoomInvitation(message) {
            broadcaster.publish(.room(.invitation(invitation)))
            return true
        }
        let room = from.bare
        guard let state = rooms[room] else { return false }
        if message.type == .groupchat, message.body == nil,
            let subject = message.element.child("subject", namespace: NS.client)?.text
        {
            rooms[room]?.subject = subject
            broadcaster.publish(.room(.subject(room: room, subject: subject, nick: from.resourcepart)))
            return true
        }
        guard let body = message.body else { return message.type == .groupchat }
        let isPrivate = message.type != .groupchat
        guard !isPrivate || from.resourcepart != nil else { return false }
        let stamp = roomDelayStamp(of: message, room: room)
        let received = RoomMessage(
            id: message.id ?? makeID(), room: room, nick: from.resourcepart, body: body,
            timestamp: stamp ?? Date(), isDelayed: stamp != nil, isPrivate: isPrivate,
            isOwn: !isPrivate && from.resourcepart == state.nick)
        if !isPrivate {
            let isNew = await archive(
                ArchivedMessage(
                    account: account, contact: room, body: body, timestamp: received.timestamp,
                    isOutgoing: received.isOwn, id: received.id, serverID: Self.serverID(of: message, by: room),
                    nick: received.nick))
            let newest = rooms[room]?.newestMessage ?? .distantPast
            if received.timestamp > newest { rooms[room]?.newestMessage = received.timestamp }
            guard isNew else { return true }
        }
        broadcaster.publish(.room(.message(received)))
        return true
    }

    /// The delay stamp the room (or its service) put on a message from its
    /// history (XEP-0045 §7.2.15); any other stamp is the sender's own,
    /// which could backdate the message, and is ignored.
    private func roomDelayStamp(of message: Message, room: JID) -> Date? {
        Self.delayStamp(of: message) { from in
            from == room || (from.localpart == nil && from.domainpart == room.domainpart)
        }
    }
}
