import XMPPCore
import XMPPStorage

/// The query protocol of XEP-0313 for one kind of archive, whose ids are
/// `ids`: reading a `<query/>` (its form, §4.1, and RSM set, §4.3) into a
/// store query, and answering a page with one `<result/>` per item and the
/// `<fin/>`. The users' archives and the rooms' share it.
struct ArchiveQueries: Sendable {
    /// The query form (XEP-0313 §4.1.5), fields typed as §4.1.5 shows them.
    static let form = DataForm(type: "form", fields: [
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

    /// Items in a page when the query does not say.
    static let defaultPageSize = 50
    /// The most items in one page, whatever the query asks (XEP-0313
    /// §4.3.1 lets a server limit pages).
    static let maxPageSize = 250
    /// A page stops growing once its stanzas reach this many bytes, so
    /// that one query never queues more than about this much output.
    static let pageByteLimit = 256 << 10
    /// Matching items are counted (RSM `<count/>`, XEP-0059 §2.6) up to
    /// this many; a query matching more gets no count, which RSM allows,
    /// so that a page of a million-message archive costs what one of ten
    /// thousand does.
    static let countLimit = 10_000

    /// The answer to `<query/>` of type get: the form.
    static var formAnswer: IQAnswer {
        .result(Element("query", namespace: NS.mam, children: [.element(form.element)]))
    }

    /// The ids of the archive queried.
    let ids: ArchiveIDs

    // MARK: - Answering

    /// Sends `page` to `requester` (its items in the order asked for: flipped
    /// with `<flip-page/>`), each `<result/>` `from` the archive's address,
    /// and returns the `<fin/>` that ends the answer.
    func send(
        _ page: ArchivePage, for payload: Element, from archive: JID, to requester: JID, session: ClientSession
    ) -> Element {
        let queryID = payload[attribute: "queryid"]
        let flipped = payload.child("flip-page") != nil
        for item in flipped ? page.items.reversed() : page.items {
            guard let message = result(item, queryID: queryID, from: archive, to: requester) else {
                session.log.error("archived message \(item.sequence) of \(archive) cannot be read")
                continue
            }
            session.send(message)
        }
        var fin = Element("fin", namespace: NS.mam)
        if page.complete { fin[attribute: "complete"] = "true" }
        let set = ResultSetReply(
            first: page.items.first.map { ids.id(for: $0.sequence) },
            last: page.items.last.map { ids.id(for: $0.sequence) }, count: page.count)
        fin.append(set.element)
        return fin
    }

    /// `<metadata/>` (XEP-0313 §5) of an archive whose oldest and newest
    /// items are `bounds`, or nothing for an empty archive.
    func metadata(_ bounds: (oldest: ArchiveItem, newest: ArchiveItem)?) -> Element {
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
        return metadata
    }

    /// `<message from=archive to=requester><result queryid id><forwarded>
    /// <delay/>stanza…` (XEP-0313 §4.2).
    private func result(_ item: ArchiveItem, queryID: String?, from archive: JID, to requester: JID) -> Element? {
        guard let stanza = StoredStanza.parse(item.stanza) else { return nil }
        let delay = Element(
            "delay", namespace: NS.delay, attributes: ["stamp": DateTimeProfile.string(millisecondsSince1970: item.timestamp)])
        let forwarded = Element("forwarded", namespace: NS.forward, children: [.element(delay), .element(stanza)])
        var result = Element(
            "result", namespace: NS.mam, attributes: ["id": ids.id(for: item.sequence)], children: [.element(forwarded)])
        result[attribute: "queryid"] = queryID
        return Element(
            "message", namespace: NS.client, attributes: ["to": requester.description, "from": archive.description],
            children: [.element(result)])
    }

    /// Runs `query` on the storage thread, turning a store's
    /// `ArchiveItemNotFound` into the `item-not-found` XEP-0313 §4.3 asks for.
    func run(_ query: () throws -> ArchivePage) throws -> ArchivePage {
        do {
            return try query()
        } catch let error as ArchiveItemNotFound {
            throw Self.notFound(ids.id(for: error.sequence))
        }
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
    func query(from payload: Element) throws(StanzaError) -> ArchiveQuery {
        var query = ArchiveQuery(max: Self.defaultPageSize, byteLimit: Self.pageByteLimit)
        query.countLimit = Self.countLimit
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
            guard Self.form.fields.contains(where: { $0.name == name }) else {
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

    /// `item-not-found` for an id no archived message has.
    static func notFound(_ id: String) -> StanzaError {
        StanzaError(.itemNotFound, text: "no archived message has the id '\(id)'")
    }

    private static func time(_ text: String) throws(StanzaError) -> Int {
        guard let milliseconds = DateTimeProfile.milliseconds(from: text) else {
            throw StanzaError(.badRequest, text: "'\(text)' is not an XEP-0082 DateTime such as 2024-01-31T12:00:00Z")
        }
        return milliseconds
    }
}
