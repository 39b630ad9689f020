import Foundation
import XMPPCore

/// Messages in a room (XEP-0045 §7.4, §7.5, §8.1): to everyone, changes of
/// subject, and private messages between occupants.
extension MUCRoom {
    /// A groupchat message from the occupant `resource` joined as, for
    /// every occupant's resources `from` its room address (§7.4). One with
    /// a `<subject/>` and neither `<body/>` nor `<thread/>` changes the
    /// subject (§8.1: moderators may, and participants when the room lets
    /// them); any other with a `<body/>` or a `<subject/>` goes into the
    /// history (chat states do not), and one with a body into `archive`
    /// too, its stanza id on every copy. Each copy carries the sender's
    /// occupant id (XEP-0421).
    ///
    /// - Throws: `not-acceptable` when `resource` is not an occupant
    ///   (§7.4: only occupants may send to the room), `forbidden` for a
    ///   visitor (§7.4) or a subject change the occupant may not make.
    mutating func groupchat(
        _ message: Element, from resource: JID, received: Int, archive: MUCArchive
    ) throws(StanzaError) -> [MUCDelivery] {
        guard let occupant = occupant(joinedFrom: resource) else {
            throw StanzaError(.notAcceptable, type: .cancel, text: "only occupants may send messages to the room")
        }
        guard occupant.role >= .participant else {
            throw StanzaError(.forbidden, type: .auth, text: "visitors may not speak in this moderated room")
        }
        var element = cleaned(message)
        element.attributes.removeAll { $0.name == "to" }
        element[attribute: "from"] = address(of: occupant.nick).description
        element.append(occupantIDElement(of: occupant))
        let hasSubject = message.child("subject", namespace: NS.client) != nil
        if hasSubject, message.child("body", namespace: NS.client) == nil,
            message.child("thread", namespace: NS.client) == nil
        {
            guard occupant.role == .moderator || configuration.occupantsMayChangeSubject else {
                throw StanzaError(.forbidden, type: .auth, text: "only moderators may change the subject of this room")
            }
            subject = element
            revision += 1
        } else if hasSubject || message.child("body", namespace: NS.client) != nil {
            element = archived(element, nick: occupant.nick, received: received, archive: archive)
            var stored = element
            stored.append(.delay(from: jid.description, at: received))
            history.append(stored, received: received)
        }
        var deliveries = toEveryone(element)
        if let body = element.childText("body"), !body.isEmpty {
            let mentions = Mentions(in: body)
            for index in deliveries.indices {
                guard let nick = nicks[deliveries[index].to], nick != occupant.nick else { continue }
                deliveries[index].mentionsRecipient = mentions.name(nick)
            }
        }
        return deliveries
    }

    /// A private message from the occupant `resource` joined as to the
    /// one called `nick`: each of its resources gets it `from` the
    /// sender's room address, marked with `<x xmlns='…muc#user'/>`
    /// (§7.5), with the sender's occupant id (XEP-0421).
    ///
    /// - Throws: `not-acceptable` when `resource` is not an occupant,
    ///   `forbidden` when the room does not let it send private messages
    ///   (`muc#roomconfig_allowpm`), `item-not-found` when no one is
    ///   called `nick`.
    func privateMessage(_ message: Element, from resource: JID, to nick: String) throws(StanzaError) -> [MUCDelivery] {
        guard let sender = occupant(joinedFrom: resource) else {
            throw StanzaError(.notAcceptable, type: .cancel, text: "only occupants may send private messages")
        }
        let allowed: Bool =
            switch configuration.privateMessages {
            case .anyone: true
            case .participants: sender.role >= .participant
            case .moderators: sender.role == .moderator
            case .none: false
            }
        guard allowed else {
            throw StanzaError(.forbidden, type: .auth, text: "this room does not let you send private messages")
        }
        guard let recipient = occupants[nick] else {
            throw StanzaError(.itemNotFound, type: .cancel, text: "no one in this room has this nickname")
        }
        var element = cleaned(message)
        element[attribute: "from"] = address(of: sender.nick).description
        element.append(occupantIDElement(of: sender))
        element.append(Element("x", namespace: NS.mucUser))
        return recipient.resources.map { MUCDelivery(to: $0, element: element) }
    }

    /// `message` without what only the room may say: `muc#user` elements
    /// (status codes, real JIDs, invitations), occupant ids, and delays or
    /// stanza ids claiming the room or the service, which would backdate or
    /// mark a message as the room's own.
    private func cleaned(_ message: Element) -> Element {
        var element = message.withoutOccupantIDs
        let service = jid.domainpart
        element.removeChildren(named: "x", namespace: NS.mucUser) { _ in true }
        // A delay without `from` is the client's own; one naming the service
        // or an address at it (or not a JID at all) claims the room.
        element.removeChildren(named: "delay", namespace: NS.delay) { delay in
            guard let from = delay[attribute: "from"] else { return false }
            return (try? JID(from))?.domainpart ?? service == service
        }
        MessageArchive.stripStanzaIDs(claimedBy: service, from: &element)
        return element
    }
}

/// Which nicknames a message body names as words of their own (not inside
/// a longer word), ignoring case. The body's words are collected once, so
/// checking every occupant of a room costs about one pass over the body;
/// only a nickname that is not one word (a space or punctuation in it) is
/// searched for in the body.
struct Mentions {
    private let body: String
    private let words: Set<String>

    init(in body: String) {
        self.body = body
        words = Set(body.lowercased().split { !Self.isWordCharacter($0) }.map(String.init))
    }

    /// Whether the body names `nick`.
    func name(_ nick: String) -> Bool {
        let lowered = nick.lowercased()
        if lowered.allSatisfy(Self.isWordCharacter) { return words.contains(lowered) }
        var searched = body.startIndex..<body.endIndex
        while let found = body.range(of: nick, options: .caseInsensitive, range: searched) {
            let before = found.lowerBound == body.startIndex ? nil : body[body.index(before: found.lowerBound)]
            let after = found.upperBound == body.endIndex ? nil : body[found.upperBound]
            if !(before.map(Self.isWordCharacter) ?? false), !(after.map(Self.isWordCharacter) ?? false) { return true }
            searched = body.index(after: found.lowerBound)..<body.endIndex
        }
        return false
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber
    }
}
