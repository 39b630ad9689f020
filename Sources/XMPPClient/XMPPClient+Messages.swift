import Foundation
import XMPPCore

extension XMPPClient {
    /// Sends `body` to `jid` as a chat message and archives it; returns the
    /// message's id.
    /// - Throws: `.notConnected`, or `.invalidRequest` for text XML cannot
    ///   carry (control characters).
    @discardableResult
    public func send(_ body: String, to jid: JID) async throws(XMPPClientError) -> String {
        guard connection != nil else { throw .notConnected }
        let id = makeID()
        guard transmit(Message(type: .chat, to: jid, id: id, body: body).element) else {
            throw .invalidRequest("the text contains characters XML cannot carry")
        }
        await archive(
            ArchivedMessage(
                account: account, contact: jid.bare, body: body, timestamp: Date(), isOutgoing: true, id: id,
                isRead: true))
        return id
    }

    /// The conversation with `contact` from the local archive: the newest
    /// `limit` messages before `before` (or the newest overall), oldest first.
    public func conversation(with contact: JID, before: Date? = nil, limit: Int = 50) async throws(XMPPClientError)
        -> [ArchivedMessage]
    {
        do {
            return try await store.conversation(account: account, contact: contact.bare, before: before, limit: limit)
        } catch {
            throw .storage("\(error)")
        }
    }

    /// One entry per contact with the last message and the unread count,
    /// the most recent conversation first.
    public func recentConversations(limit: Int = 20) async throws(XMPPClientError) -> [ConversationSummary] {
        do {
            return try await store.recentConversations(account: account, limit: limit)
        } catch {
            throw .storage("\(error)")
        }
    }

    /// Marks the conversation with `contact` as read.
    public func markRead(_ contact: JID) async throws(XMPPClientError) {
        do {
            try await store.markRead(account: account, contact: contact.bare)
        } catch {
            throw .storage("\(error)")
        }
    }

    func handle(_ message: Message) async {
        guard let from = message.from else { return }
        if message.isError {
            let error = message.error
            broadcaster.publish(
                .messageFailed(
                    id: message.id, from: from,
                    error: .stanzaError(error?.condition ?? .undefinedCondition, text: error?.text)))
            return
        }
        if await handleCarbon(message) || handleArchiveResult(message) || handleAvatarMetadata(message)
            || handleBookmarksNotification(message)
        {
            return
        }
        if await handleRoomMessage(message) { return }
        await handleChat(message, sentByUs: false)
    }

    /// Archives and publishes a message with a body: one we received, or
    /// (`sentByUs`) one another of our resources sent.
    func handleChat(_ message: Message, sentByUs: Bool) async {
        guard let from = message.from, let body = message.body else { return }
        let stamp = trustedDelayStamp(of: message, sentByUs: sentByUs)
        let received = ReceivedMessage(
            id: message.id ?? makeID(), from: from, to: message.to, type: message.type, body: body,
            timestamp: stamp ?? Date(), isDelayed: stamp != nil, sentByUs: sentByUs,
            attachmentURL: message.element.child("x", namespace: NS.oob)?.childText("url", namespace: NS.oob))
        if received.type == .chat || received.type == .normal {
            let contact = sentByUs ? message.to?.bare : from.bare
            guard let contact else { return }
            let isNew = await archive(
                ArchivedMessage(
                    account: account, contact: contact, body: body, timestamp: received.timestamp,
                    isOutgoing: sentByUs, id: received.id, serverID: Self.serverID(of: message, by: account)))
            guard isNew else { return }
        }
        broadcaster.publish(.message(received))
    }

    /// The XEP-0203 stamp of `message` if someone we trust put it there:
    /// our server (`from` is our domain, as on offline messages) or, on a
    /// copy of a message one of our resources sent, our own account. Any
    /// other stamp, such as one a contact wrote, is ignored: it would let
    /// the sender backdate the message in the local archive. Of several
    /// trusted stamps the last counts, since a server appends its own after
    /// whatever the sender put in.
    func trustedDelayStamp(of message: Message, sentByUs: Bool) -> Date? {
        Self.delayStamp(of: message) { from in
            let isOurServer = from.localpart == nil && from.resourcepart == nil
                && from.domainpart == account.domainpart
            return isOurServer || (sentByUs && from.bare == account)
        }
    }

    /// The stamp of the last XEP-0203 delay on `message` whose `from` is
    /// `trusted`.
    static func delayStamp(of message: Message, from trusted: (JID) -> Bool) -> Date? {
        let delay = message.element.elements.last { delay in
            guard delay.name == "delay", delay.namespace == NS.delay,
                let from = delay[attribute: "from"].flatMap({ try? JID($0) })
            else { return false }
            return trusted(from)
        }
        return delay?[attribute: "stamp"].flatMap(parseStamp)
    }

    /// The id that `archive` (our account, or a room) gave `message` in its
    /// `<stanza-id/>` (XEP-0359), if any.
    static func serverID(of message: Message, by archive: JID) -> String? {
        message.element.elements.first {
            $0.name == "stanza-id" && $0.namespace == NS.stanzaID && $0[attribute: "by"] == archive.description
        }?[attribute: "id"]
    }

    /// Archives `message`; false when it was already there (a duplicate).
    /// A store failure does not stop the message from being shown.
    @discardableResult
    func archive(_ message: ArchivedMessage) async -> Bool {
        (try? await store.record(message)) ?? true
    }

    /// Parses an XEP-0082 date-time such as `2026-11-29T21:45:33.123Z`.
    static func parseStamp(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
