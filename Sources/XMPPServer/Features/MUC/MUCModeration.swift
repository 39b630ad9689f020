import XMPPCore
import XMPPStorage

/// XEP-0425: Moderated Message Retraction (`urn:xmpp:message-moderate:1`):
/// a moderator retracts a message of the room by its stanza id,
///
///     <iq type='set' to='room@service'>
///       <moderate id='stanza id' xmlns='urn:xmpp:message-moderate:1'>
///         <retract xmlns='urn:xmpp:message-retract:1'/><reason>…</reason>
///       </moderate>
///     </iq>
///
/// The archive keeps a tombstone in the message's place (its content gone,
/// `<retracted/>` saying who retracted it, when and why), the history
/// likewise, and every occupant gets a groupchat message from the room
/// with `<retract id/>` (XEP-0424), which is archived too, so that clients
/// catching up learn of it. The older form (`urn:xmpp:message-moderate:0`
/// inside XEP-0422 `<apply-to/>`) is not supported: like any other IQ the
/// room does not know, it gets `feature-not-implemented`.
extension MultiUserChat {
    /// Retracts the message a moderator names.
    ///
    /// - Throws: `forbidden` when the sender is no moderator of the room,
    ///   `bad-request` without `<retract/>`, `item-not-found` for an id the
    ///   room's archive does not hold.
    func moderate(_ request: IQRequest, room: MUCRoom) throws -> IQAnswer {
        guard let sender = request.session.jid, let moderator = room.occupant(joinedFrom: sender),
            moderator.role == .moderator
        else {
            throw StanzaError(.forbidden, text: "only moderators may retract others' messages")
        }
        let payload = request.iq.payload!
        guard payload.child("retract", namespace: NS.messageRetract) != nil else {
            throw StanzaError(.badRequest, text: "<moderate/> holds <retract xmlns='\(NS.messageRetract)'/>")
        }
        let id = payload[attribute: "id"] ?? ""
        guard let sequence = archive.ids.sequence(of: id) else { throw ArchiveQueries.notFound(id) }
        let retraction = MUCRoom.Retraction(
            id: id, moderator: room.address(of: moderator.nick), occupantID: room.occupantIDElement(of: moderator),
            reason: payload.childText("reason", namespace: NS.messageModerate), at: clock.milliseconds)
        let address = room.jid.description
        let (archive, rooms, name) = (archive, rooms, room.jid.localpart ?? "")
        return .afterStorage({ stores in
            try archive.flush(stores)
            guard let item = try stores.roomArchive.item(sequence, ofRoom: address),
                let tombstone = StoredStanza.parse(item.stanza).flatMap({ StoredStanza.serialize(retraction.tombstone(of: $0)) })
            else { throw ArchiveQueries.notFound(id) }
            try stores.roomArchive.replaceStanza(of: sequence, ofRoom: address, with: tombstone)
        }) { _ in
            .result(nil) {
                let out = try? rooms.change(name) { room in
                    room.retract(retraction, archive: archive)
                }
                archive.flushSoon(after: request.session)
                Self.send(out ?? [], on: request.server)
            }
        }
    }
}

extension MUCRoom {
    /// A moderator's retraction of one message.
    struct Retraction: Sendable {
        /// The message's stanza id.
        let id: String
        /// The moderator's room address.
        let moderator: JID
        /// The moderator's `<occupant-id/>`.
        let occupantID: Element
        let reason: String?
        /// When, in milliseconds since 1970.
        let at: Int

        /// `<moderated by><occupant-id/></moderated>`, then the reason.
        private var details: [Node] {
            let moderated = Element(
                "moderated", namespace: NS.messageModerate, attributes: ["by": moderator.description],
                children: [.element(occupantID)])
            var children: [Node] = [.element(moderated)]
            if let reason {
                children.append(.element(Element("reason", namespace: NS.messageModerate, children: [.text(reason)])))
            }
            return children
        }

        /// What stays of `message`: its attributes, its stanza id, occupant
        /// id and delay, and `<retracted stamp/>` with the details.
        func tombstone(of message: Element) -> Element {
            var tombstone = message
            tombstone.children = message.elements.filter { child in
                [NS.stanzaID, NS.occupantID, NS.delay].contains(child.namespace)
            }.map { .element($0) }
            tombstone.append(Element(
                "retracted", namespace: NS.messageRetract,
                attributes: ["stamp": DateTimeProfile.string(millisecondsSince1970: at)], children: details))
            return tombstone
        }

        /// The room's groupchat message announcing it (XEP-0425 §4).
        var announcement: Element {
            let retract = Element("retract", namespace: NS.messageRetract, attributes: ["id": id], children: details)
            return Element(
                "message", namespace: NS.client,
                attributes: ["from": moderator.bare.description, "type": "groupchat", "id": "retract-" + id],
                children: [.element(retract)])
        }
    }

    /// Carries out `retraction`: the history keeps a tombstone, and every
    /// occupant gets the announcement, which `archive` keeps too.
    mutating func retract(_ retraction: Retraction, archive: MUCArchive) -> [MUCDelivery] {
        history.update(stanzaID: retraction.id, by: jid) { retraction.tombstone(of: $0) }
        let announcement = archived(
            retraction.announcement, nick: "", received: retraction.at, archive: archive, always: true)
        return toEveryone(announcement)
    }
}
