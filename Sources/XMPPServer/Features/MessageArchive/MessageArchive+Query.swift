import XMPPCore
import XMPPStorage

extension MessageArchive {
    /// Answers an archive query (XEP-0313 §4): the matching messages, one
    /// `<result/>` each from the user's bare JID, then the `<fin/>` with
    /// the page's RSM set. The session reads no further stanza until it has
    /// answered, and the query runs after the archive writes of everything
    /// routed before it.
    func query(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        guard let owner = request.session.jid else { throw StanzaError(.notAuthorized) }
        let payload = request.iq.payload!
        let queries = ArchiveQueries(ids: ids)
        let query = try queries.query(from: payload)
        let writer = writer
        let log = request.session.log
        return .afterStorage({ stores in
            try writer.flush(stores, log: log)
            return try queries.run { try stores.archive.query(query, for: username) }
        }) { page in
            .result(queries.send(page, for: payload, from: owner.bare, to: owner, session: request.session))
        }
    }

    /// Answers a metadata request (XEP-0313 §5): the first and last items,
    /// or nothing for an empty archive.
    func metadata(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let (writer, ids) = (writer, ids)
        let log = request.session.log
        return .afterStorage({ stores in
            try writer.flush(stores, log: log)
            return try stores.archive.bounds(for: username)
        }) { bounds in
            .result(ArchiveQueries(ids: ids).metadata(bounds))
        }
    }
}
