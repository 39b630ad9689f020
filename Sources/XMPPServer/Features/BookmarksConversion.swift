import XMPPCore
import XMPPStorage

/// XEP-0402 §3 (`urn:xmpp:bookmarks:1#compat`): XEP-0048 bookmarks kept in
/// private XML storage (XEP-0049) and XEP-0402 bookmarks in PEP are one set.
///
/// The PEP node `urn:xmpp:bookmarks:1` is the only copy, so the two forms
/// cannot disagree:
/// - a private-storage get of `<storage xmlns='storage:bookmarks'/>` is
///   computed from the node's items, each `<conference/>` with its item id
///   as `jid`;
/// - a private-storage set is compared with the node's items, and PEP is
///   asked (`PEPPublishRequest`, `PEPRetractRequest`) to publish the
///   conferences that are new or changed and to retract those no longer
///   listed; unchanged ones cause no notification (§3.2.2).
///
/// A `<conference/>`'s `<nick/>` and `<password/>` map to the same elements
/// and its other children to `<extensions/>` (and back); a conference
/// without a valid `jid` is skipped, as are XEP-0048 `<url/>` bookmarks,
/// which XEP-0402 cannot hold.
enum BookmarksConversion {
    /// Whether `element` is XEP-0048's `<storage xmlns='storage:bookmarks'/>`.
    static func isLegacyStorage(_ element: Element) -> Bool {
        element.name == "storage" && element.namespace == NS.bookmarksLegacy
    }

    /// The XEP-0048 bookmarks, from the PEP node.
    static func get(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        return .afterStorage({ stores in
            try stores.pep.items(of: NS.bookmarks, owner: username, ids: nil, limit: nil)
        }) { items in
            .result(PrivateStorage.query(legacyStorage(items.reversed().compactMap(parse))))
        }
    }

    /// Makes the PEP node hold the conferences of `storage`.
    static func set(_ storage: Element, _ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let session = request.session
        guard let owner = session.jid?.bare else { throw StanzaError(.notAuthorized) }
        let limits = request.server.config.limits
        let wanted = conferences(in: storage)
        guard wanted.count <= limits.pepMaxItems else {
            throw StanzaError(.resourceConstraint, text: "at most \(limits.pepMaxItems) bookmarks may be stored")
        }
        for (id, payload) in wanted where (StoredStanza.serialize(payload)?.utf8.count ?? .max) > limits.pepMaxItemSize {
            throw StanzaError(.notAcceptable, text: "the bookmark of \(id) is larger than \(limits.pepMaxItemSize) bytes")
        }
        // whitelist, max: the node must be private (access model
        // `whitelist`) with `max_items` `max` and `send_last_published_item`
        // `never`; PEP's configuration cannot say so yet.
        let configuration = PEPNodeConfiguration(accessModel: .presence, maxItems: limits.pepMaxItems, persistItems: true)
        return .afterStorage({ stores in
            try stores.pep.items(of: NS.bookmarks, owner: username, ids: nil, limit: nil)
        }) { items in
            let stored = Dictionary(items.compactMap(parse).map { ($0.id, $0.payload) }) { newest, _ in newest }
            let hooks = request.server.hooks
            for (id, payload) in wanted where stored[id].map(normalized) != payload {
                let item = Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(payload)])
                hooks.fire(
                    PEPPublishRequest(
                        owner: owner, node: NS.bookmarks, item: item, configuration: configuration, session: session))
            }
            let kept = Set(wanted.map(\.id))
            for id in stored.keys.sorted() where !kept.contains(id) {
                hooks.fire(PEPRetractRequest(owner: owner, node: NS.bookmarks, itemID: id, session: session))
            }
            return .result()
        }
    }

    // MARK: - Converting

    /// The XEP-0402 items for the conferences of an XEP-0048 `<storage/>`,
    /// in its order, one per room (the last one of a room wins).
    static func conferences(in storage: Element) -> [(id: String, payload: Element)] {
        var result: [(id: String, payload: Element)] = []
        for conference in storage.elements where conference.name == "conference" && conference.namespace == NS.bookmarksLegacy {
            guard let jid = conference[attribute: "jid"].flatMap({ try? JID($0) }), jid.isBare else { continue }
            let item = (id: jid.description, payload: bookmark(fromLegacy: conference))
            if let index = result.firstIndex(where: { $0.id == item.id }) {
                result[index] = item
            } else {
                result.append(item)
            }
        }
        return result
    }

    /// An XEP-0048 `<conference/>` as the payload of an XEP-0402 item.
    static func bookmark(fromLegacy conference: Element) -> Element {
        var bookmark = Element("conference", namespace: NS.bookmarks)
        if let name = conference[attribute: "name"] { bookmark[attribute: "name"] = name }
        if let autojoin = conference[attribute: "autojoin"], autojoin == "true" || autojoin == "1" {
            bookmark[attribute: "autojoin"] = "true"
        }
        var extensions = Element("extensions", namespace: NS.bookmarks)
        for child in conference.elements {
            if child.namespace == NS.bookmarksLegacy, child.name == "nick" || child.name == "password" {
                bookmark.append(Element(child.name, namespace: NS.bookmarks, children: [.text(child.text)]))
            } else if child.namespace != NS.bookmarksLegacy {
                extensions.append(child)
            }
        }
        if !extensions.children.isEmpty { bookmark.append(extensions) }
        return bookmark
    }

    /// An XEP-0402 item as an XEP-0048 `<conference/>`.
    static func legacyConference(id: String, payload: Element) -> Element {
        var conference = Element("conference", namespace: NS.bookmarksLegacy, attributes: ["jid": id])
        if let name = payload[attribute: "name"] { conference[attribute: "name"] = name }
        let autojoin = payload[attribute: "autojoin"]
        conference[attribute: "autojoin"] = autojoin == "true" || autojoin == "1" ? "true" : "false"
        for child in payload.elements where child.namespace == NS.bookmarks {
            switch child.name {
            case "nick", "password":
                conference.append(Element(child.name, namespace: NS.bookmarksLegacy, children: [.text(child.text)]))
            case "extensions":
                for element in child.elements { conference.append(element) }
            default:
                break
            }
        }
        return conference
    }

    /// `<storage xmlns='storage:bookmarks'/>` with the conferences of `items`.
    static func legacyStorage(_ items: [(id: String, payload: Element)]) -> Element {
        Element(
            "storage", namespace: NS.bookmarksLegacy,
            children: items.map { .element(legacyConference(id: $0.id, payload: $0.payload)) })
    }

    /// A stored payload as `bookmark(fromLegacy:)` would write it, so that a
    /// conference is compared by what XEP-0048 can say of it.
    private static func normalized(_ payload: Element) -> Element {
        bookmark(fromLegacy: legacyConference(id: "", payload: payload))
    }

    /// A stored item of the node, or nil for one that is not an XEP-0402
    /// conference.
    private static func parse(_ item: PEPItem) -> (id: String, payload: Element)? {
        guard let payload = StoredStanza.parse(item.payload), payload.name == "conference",
            payload.namespace == NS.bookmarks
        else { return nil }
        return (item.id, payload)
    }
}
