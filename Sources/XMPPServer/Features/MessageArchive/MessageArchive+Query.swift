import XMPPCore
import XMPPStorage

extension MessageArchive {
    /// The query form (XEP-0313 §4.1.5), fields typed as §4.1.5 shows them.
    static let queryForm = DataForm(type: "form", fields: [
        .init("FORM_TYPE", type: "hidden", values: [NS.mam]),
        .init("with", type: "jid-single"),
        .init("start", type: "text-single"),
        .init("end", type: "text-single"),
        .init("before-id", type: "text-single"),
        .init("after-id", type: "text-single"),
        .init("ids", type: "list-multi", extras: [
            Element(
                "validate", namespace: NS.dataFormsValidate, attributes: ["datatype": "xs:string"],
                children: [.element(Element("open", namespace: NS.dataFormsValidate))]),
        ]),
    ])

    /// Answers an archive query (XEP-0313 §4): the matching messages, one
    /// `<result/>` each, then the `<fin/>` with the page's RSM set. The
    /// session reads no further stanza until it has answered, and the
    /// query runs after the archive writes of everything routed before it.
    func query(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        guard let owner = request.session.jid else { throw StanzaError(.notAuthorized) }
        let payload = request.iq.payload!
        let query = try archiveQuery(from: payload)
        let queryID = payload[attribute: "queryid"]
        let flipped = payload.child("flip-page") != nil
        let (writer, ids) = (writer, ids)
        let log = request.session.log
        return .afterStorage({ stores in
            try writer.flush(stores, log: log)
            do {
                return try stores.archive.query(query, for: username)
            } catch let error as ArchiveItemNotFound {
                throw Self.notFound(ids.id(for: error.sequence))
            }
        }) { page in
            for item in flipped ? page.items.reversed() : page.items {
                guard let message = Self.result(item, id: ids.id(for: item.sequence), queryID: queryID, to: owner)
                else {
                    log.error("archived message \(item.sequence) of \(username) cannot be read")
                    continue
                }
                request.session.send(message)
            }
            var fin = Element("fin", namespace: NS.mam)
            if page.complete { fin[attribute: "complete"] = "true" }
            let set = ResultSetReply(
                first: page.items.first.map { ids.id(for: $0.sequence) },
                last: page.items.last.map { ids.id(for: $0.sequence) }, count: page.count)
            fin.append(set.element)
            return .result(fin)
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
            var metadata = Element("metadata", namespace: NS.mam)
            if let (oldest, newest) = bounds {
                for (name, item) in [("start", oldest), ("end", newest)] {
                    metadata.append(Element(
                        name, namespace: NS.mam,
                        attributes: [
                            "id": ids.id(for: item.sequence),
                            "timestamp": DateTimeProfile.string(millisecondsSince1970: item.timestamp),
                        ]))
                }
            }
            return .result(metadata)
        }
    }

    /// `<message to='owner'><result queryid id><forwarded><delay/>stanza…`
    /// (XEP-0313 §4.2), from the archive's bare JID.
    private static func result(_ item: ArchiveItem, id: String, queryID: String?, to owner: JID) -> Element? {
        guard let stanza = StoredStanza.parse(item.stanza) else { return nil }
        let delay = Element(
            "delay", namespace: NS.delay, attributes: ["stamp": DateTimeProfile.string(millisecondsSince1970: item.timestamp)])
        let forwarded = Element("forwarded", namespace: NS.forward, children: [.element(delay), .element(stanza)])
        var result = Element("result", namespace: NS.mam, attributes: ["id": id], children: [.element(forwarded)])
        result[attribute: "queryid"] = queryID
        return Element(
            "message", namespace: NS.client, attributes: ["to": owner.description, "from": owner.bare.description],
            children: [.element(result)])
    }

    // MARK: - Reading the query

    /// The store query a `<query/>` asks for: its form (XEP-0313 §4.1) and
    /// RSM set (§4.3).
    ///
    /// COMPAT: XMPPFramework: lenient where it and others are sloppy:
    /// fields without a `type`, a form without `FORM_TYPE`, empty fields
    /// (ignored).
    ///
    /// - Throws: `bad-request` for a malformed value, a foreign
    ///   `FORM_TYPE`, or `<before/>` with `<after/>`;
    ///   `feature-not-implemented` for an unknown field or `<index/>`.
    ///   A well-formed id no item can have is `item-not-found` at once.
    func archiveQuery(from payload: Element) throws(StanzaError) -> ArchiveQuery {
        var query = ArchiveQuery(max: Self.defaultPageSize, byteLimit: Self.pageByteLimit)
        if let x = payload.child("x", namespace: NS.dataForms), let form = DataForm(x) {
            try apply(form, to: &query)
        }
        if let set = payload.child("set", namespace: NS.rsm) {
            let page = try ResultSetRequest(set)
            if page.index != nil {
                throw StanzaError(.featureNotImplemented, text: "paging by <index/> is not supported; use <after/> or <before/>")
            }
            switch (page.after, page.before) {
            case (nil, nil): break
            case (let after?, nil): query.position = .after(try sequence(of: after))
            case (nil, ""): query.position = .last
            case (nil, let before?): query.position = .before(try sequence(of: before))
            case (_?, _?):
                throw StanzaError(.badRequest, text: "<after/> and <before/> together; use after-id and before-id")
            }
            query.max = min(page.max ?? Self.defaultPageSize, Self.maxPageSize)
        }
        return query
    }

    private func apply(_ form: DataForm, to query: inout ArchiveQuery) throws(StanzaError) {
        if let formType = form.formType, formType != NS.mam {
            throw StanzaError(.badRequest, text: "FORM_TYPE must be \(NS.mam)")
        }
        var seen: Set<String> = []
        for field in form.fields {
            guard let name = field.name, name != "FORM_TYPE" else { continue }
            guard seen.insert(name).inserted else { throw StanzaError(.badRequest, text: "the field '\(name)' twice") }
            guard Self.queryForm.fields.contains(where: { $0.name == name }) else {
                // XEP-0313 §4.1.5: an unknown field is refused, not ignored.
                throw StanzaError(.featureNotImplemented, text: "unknown field '\(name)'")
            }
            let values = field.values.filter { !$0.isEmpty }
            guard let value = values.first else { continue }
            if name != "ids", values.count > 1 {
                throw StanzaError(.badRequest, text: "the field '\(name)' takes one value")
            }
            switch name {
            case "with":
                guard let jid = try? JID(value) else { throw StanzaError(.badRequest, text: "'\(value)' is not a JID") }
                query.with = ArchivePeer(bare: jid.bare.description, resource: jid.resourcepart)
            case "start": query.start = try Self.time(value)
            case "end": query.end = try Self.time(value)
            case "after-id": query.after = try sequence(of: value)
            case "before-id": query.before = try sequence(of: value)
            case "ids":
                guard values.count <= Self.maxPageSize else {
                    throw StanzaError(.badRequest, text: "at most \(Self.maxPageSize) ids in one query")
                }
                var sequences: [Int64] = []
                for id in values { sequences.append(try sequence(of: id)) }
                query.items = sequences
            default:
                preconditionFailure("a field of queryForm without a case: \(name)")
            }
        }
    }

    /// The sequence an id stands for, or `item-not-found`.
    private func sequence(of id: String) throws(StanzaError) -> Int64 {
        guard let sequence = ids.sequence(of: id) else { throw Self.notFound(id) }
        return sequence
    }

    private static func notFound(_ id: String) -> StanzaError {
        StanzaError(.itemNotFound, text: "no archived message has the id '\(id)'")
    }

    private static func time(_ text: String) throws(StanzaError) -> Int {
        guard let milliseconds = DateTimeProfile.milliseconds(from: text) else {
            throw StanzaError(.badRequest, text: "'\(text)' is not an XEP-0082 DateTime such as 2024-01-31T12:00:00Z")
        }
        return milliseconds
    }
}
