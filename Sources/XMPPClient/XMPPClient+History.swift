import Foundation
import XMPPCore

extension XMPPClient {
    /// Catches the local archive up with the server's message archive
    /// (XEP-0313): everything after the newest message already known from
    /// it, or on a first sync the latest page. Returns how many messages
    /// were new here. A server without an archive answers with an error.
    @discardableResult
    public func syncHistory(pageSize: Int = 100, maxPages: Int = 20) async throws(XMPPClientError) -> Int {
        let latest: String?
        do {
            latest = try await store.latestServerID(account: account)
        } catch {
            throw .storage("\(error)")
        }
        var page = ResultSetRequest(max: pageSize, after: latest, before: latest == nil ? "" : nil)
        var added = 0
        for _ in 0..<maxPages {
            let (messages, reply, complete) = try await queryArchive(of: nil, with: nil, page: page)
            for message in messages {
                if await archive(message) { added += 1 }
            }
            guard latest != nil, !complete, let last = reply.last else { break }
            page = ResultSetRequest(max: pageSize, after: last)
        }
        return added
    }

    /// One page of the conversation with `contact` from the server's
    /// archive: the newest `limit` messages before the archive id `before`
    /// (or the newest overall), oldest first. They are also added to the
    /// local archive.
    public func serverHistory(with contact: JID, before: String? = nil, limit: Int = 50) async throws(XMPPClientError)
        -> [ArchivedMessage]
    {
        let (messages, _, _) = try await queryArchive(
            of: nil, with: contact.bare, page: ResultSetRequest(max: limit, before: before ?? ""))
        for message in messages { await archive(message) }
        return messages
    }

    /// One page of `room`'s archive (XEP-0313 §4 on a room, XEP-0045
    /// history beyond what a join brings): the newest `limit` messages
    /// before the archive id `before` (or the newest overall), oldest
    /// first, with the sender's nickname. They are also added to the local
    /// archive, keyed by the room.
    public func roomHistory(of room: JID, before: String? = nil, limit: Int = 50) async throws(XMPPClientError)
        -> [ArchivedMessage]
    {
        let (messages, _, _) = try await queryArchive(
            of: room.bare, with: nil, page: ResultSetRequest(max: limit, before: before ?? ""))
        for message in messages { await archive(message) }
        return messages
    }

    /// Runs one query of our account's archive (`archive` nil) or of a
    /// room's, and collects the results that arrive before its answer.
    private func queryArchive(of archive: JID?, with contact: JID?, page: ResultSetRequest)
        async throws(XMPPClientError) -> ([ArchivedMessage], ResultSetReply, complete: Bool)
    {
        let queryID = makeID()
        var query = Element("query", namespace: NS.mam, attributes: ["queryid": queryID])
        var fields = [DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.mam])]
        if let contact { fields.append(DataForm.Field("with", values: [contact.description])) }
        query.append(DataForm(type: "submit", fields: fields).element)
        query.append(page.element)
        archiveQueries[queryID] = ArchiveQuery(archive: archive)
        defer { archiveQueries[queryID] = nil }
        let reply = try await request(.set, to: archive, payload: query)
        let fin = reply.payload
        let set = fin?.child("set", namespace: NS.rsm).map(ResultSetReply.init) ?? ResultSetReply()
        let results = archiveQueries[queryID]?.results ?? []
        return (results, set, fin?[attribute: "complete"] == "true")
    }

    /// Takes an archive result (`<result xmlns='urn:xmpp:mam:2'/>`) for a
    /// query of ours; only the archive we asked (our own account, or the
    /// room) may send them. Returns whether `message` was one.
    func handleArchiveResult(_ message: Message) -> Bool {
        guard let result = message.element.child("result", namespace: NS.mam) else { return false }
        guard let queryID = result[attribute: "queryid"], let query = archiveQueries[queryID],
            query.archive == nil ? message.from == nil || message.from == account : message.from == query.archive,
            let serverID = result[attribute: "id"],
            let forwarded = result.child("forwarded", namespace: NS.forward),
            let inner = forwarded.child("message", namespace: NS.client).flatMap(Message.init),
            let body = inner.body, let from = inner.from
        else { return true }
        let stamp = forwarded.child("delay", namespace: NS.delay)?[attribute: "stamp"].flatMap(Self.parseStamp)
        let timestamp = stamp ?? Date()
        let archived: ArchivedMessage
        if let room = query.archive {
            let nick = from.resourcepart
            let sender = inner.element.child("x", namespace: NS.mucUser)?.child("item", namespace: NS.mucUser)?[
                attribute: "jid"
            ].flatMap { try? JID($0) }
            let outgoing = sender.map { $0.bare == account } ?? (nick != nil && nick == rooms[room]?.nick)
            archived = ArchivedMessage(
                account: account, contact: room, body: body, timestamp: timestamp, isOutgoing: outgoing,
                id: inner.id ?? serverID, serverID: serverID, isRead: true, nick: nick)
        } else {
            let outgoing = from.bare == account
            guard let contact = outgoing ? inner.to?.bare : from.bare else { return true }
            archived = ArchivedMessage(
                account: account, contact: contact, body: body, timestamp: timestamp, isOutgoing: outgoing,
                id: inner.id ?? serverID, serverID: serverID, isRead: true)
        }
        archiveQueries[queryID]?.results.append(archived)
        return true
    }
}

/// An archive query in flight: whose archive answers it (`nil`: our own
/// account's), and the results so far.
struct ArchiveQuery {
    let archive: JID?
    var results: [ArchivedMessage] = []
}
