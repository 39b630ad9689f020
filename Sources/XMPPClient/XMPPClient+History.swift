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
            let (messages, reply, complete) = try await queryArchive(with: nil, page: page)
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
            with: contact.bare, page: ResultSetRequest(max: limit, before: before ?? ""))
        for message in messages { await archive(message) }
        return messages
    }

    /// Runs one archive query and collects the results that arrive before
    /// its answer.
    private func queryArchive(with contact: JID?, page: ResultSetRequest) async throws(XMPPClientError)
        -> ([ArchivedMessage], ResultSetReply, complete: Bool)
    {
        let queryID = makeID()
        var query = Element("query", namespace: NS.mam, attributes: ["queryid": queryID])
        var fields = [DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.mam])]
        if let contact { fields.append(DataForm.Field("with", values: [contact.description])) }
        query.append(DataForm(type: "submit", fields: fields).element)
        query.append(page.element)
        archiveResults[queryID] = []
        defer { archiveResults[queryID] = nil }
        let reply = try await request(.set, payload: query)
        let fin = reply.payload
        let set = fin?.child("set", namespace: NS.rsm).map(ResultSetReply.init) ?? ResultSetReply()
        let results = archiveResults[queryID] ?? []
        return (results, set, fin?[attribute: "complete"] == "true")
    }

    /// Takes an archive result (`<result xmlns='urn:xmpp:mam:2'/>`) for a
    /// query of ours; only our own account may send them. Returns whether
    /// `message` was one.
    func handleArchiveResult(_ message: Message) -> Bool {
        guard let result = message.element.child("result", namespace: NS.mam) else { return false }
        guard message.from == nil || message.from == account,
            let queryID = result[attribute: "queryid"], archiveResults[queryID] != nil,
            let serverID = result[attribute: "id"],
            let forwarded = result.child("forwarded", namespace: NS.forward),
            let inner = forwarded.child("message", namespace: NS.client).flatMap(Message.init),
            let body = inner.body, let from = inner.from
        else { return true }
        let outgoing = from.bare == account
        guard let contact = outgoing ? inner.to?.bare : from.bare else { return true }
        let stamp = forwarded.child("delay", namespace: NS.delay)?[attribute: "stamp"].flatMap(Self.parseStamp)
        archiveResults[queryID]?.append(
            ArchivedMessage(
                account: account, contact: contact, body: body, timestamp: stamp ?? Date(), isOutgoing: outgoing,
                id: inner.id ?? serverID, serverID: serverID, isRead: true))
        return true
    }
}
