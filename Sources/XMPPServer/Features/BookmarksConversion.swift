import XMPPCore
import XMPPStorage

/// XEP-0402 §3: XEP-0048 bookmarks and XEP-0402 bookmarks are one set,
/// whether a client keeps them in private XML storage (XEP-0049,
/// `urn:xmpp:bookmarks:1#compat`), in the PEP node `storage:bookmarks`
/// (XEP-0048 §3 via XEP-0223, `#compat-pep`) or in the PEP node
/// `urn:xmpp:bookmarks:1`.
///
/// The node `urn:xmpp:bookmarks:1` is the one copy everything else is made
/// from, so that the forms cannot drift apart:
/// - a private-storage get of `<storage xmlns='storage:bookmarks'/>` is
///   computed from the node's items, each `<conference/>` with its item id
///   as `jid`; nothing is kept as private XML;
/// - a private-storage set, or an XEP-0048 `<storage/>` published to the
///   PEP node `storage:bookmarks`, is compared with the node's items, and
///   PEP is asked (`PEPPublishRequest`, `PEPRetractRequest`) to publish
///   the conferences that are new or changed and to retract those no
///   longer listed; unchanged ones cause no notification (§3.2.2);
/// - the PEP node `storage:bookmarks` exists only for users whose clients
///   created it; for them, whenever the set changes otherwise, PEP is
///   asked to publish the whole set there again (item `current`). A set
///   whose `<storage/>` is bigger than `pep_max_item_size` is not
///   published there (a notice is logged): that node keeps its previous
///   item, and `urn:xmpp:bookmarks:1` stays the set.
/// The PEP changes this feature asked for (`onBehalf`) are not converted
/// back. Bookmarks hold room passwords: every publish asks for a
/// `whitelist` node, and for an existing node to be given that
/// configuration (`enforcesConfiguration`) whatever a client created it
/// with. The stored set is read, parsed and compared in the storage job;
/// the event loop only fires the requests that result.
///
/// A `<conference/>`'s `<nick/>` and `<password/>` map to the same elements
/// and its other children to `<extensions/>` (and back); a conference
/// without a valid bare `jid` is skipped, as are XEP-0048 `<url/>`
/// bookmarks, which XEP-0402 cannot hold.
public struct BookmarksConversion: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertiseOnAccount(NS.bookmarks + "#compat")
        hooks.advertiseOnAccount(NS.bookmarks + "#compat-pep")
        hooks.on(PEPItemPublished.self) { event in
            guard !event.onBehalf else { return }
            if event.node == NS.bookmarksLegacy, let storage = event.item.child("storage", namespace: NS.bookmarksLegacy) {
                Self.legacyNodePublished(storage, by: event.session)
            } else if event.node == NS.bookmarks {
                Self.bookmarksChanged(by: event.session)
            }
        }
        hooks.on(PEPItemRetracted.self) { event in
            guard !event.onBehalf, event.node == NS.bookmarks else { return }
            Self.bookmarksChanged(by: event.session)
        }
    }

    /// Whether `element` is XEP-0048's `<storage xmlns='storage:bookmarks'/>`.
    static func isLegacyStorage(_ element: Element) -> Bool {
        element.name == "storage" && element.namespace == NS.bookmarksLegacy
    }

    /// The XEP-0048 bookmarks, for a private-storage get.
    static func get(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        return .afterStorage({ stores in legacyStorage(try bookmarks(of: username, in: stores)) }) { storage in
            .result(PrivateStorage.query(storage))
        }
    }

    /// Makes the bookmarks those of `storage`, for a private-storage set.
    static func set(_ storage: Element, _ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let session = request.session
        let wanted = conferences(in: storage)
        let limits = request.server.config.limits
        try check(wanted, against: limits)
        return .afterStorage({ stores in
            try Changes(of: username, toHold: wanted, mirroring: true, maxItemSize: limits.pepMaxItemSize, in: stores)
        }) { changes in
            ask(changes, by: session)
            return .result()
        }
    }

    /// A client published XEP-0048 bookmarks to the PEP node
    /// `storage:bookmarks`: they become the set.
    private static func legacyNodePublished(_ storage: Element, by session: ClientSession) {
        guard let username = session.username else { return }
        let wanted = conferences(in: storage)
        let limits = session.server.config.limits
        do {
            try check(wanted, against: limits)
        } catch {
            session.log.info("the PEP bookmarks of \(username) are not converted: \(error.text ?? "")")
            return
        }
        session.withStorage({ stores in
            try Changes(of: username, toHold: wanted, mirroring: false, maxItemSize: limits.pepMaxItemSize, in: stores)
        }) { result in
            guard case .success(let changes) = result else { return }
            ask(changes, by: session)
        }
    }

    /// A client changed the node `urn:xmpp:bookmarks:1`: the PEP node
    /// `storage:bookmarks`, if the user has one, gets the new set.
    private static func bookmarksChanged(by session: ClientSession) {
        guard let username = session.username else { return }
        let maxItemSize = session.server.config.limits.pepMaxItemSize
        session.withStorage({ stores in
            try Changes(of: username, toHold: nil, mirroring: true, maxItemSize: maxItemSize, in: stores)
        }) { result in
            guard case .success(let changes) = result else { return }
            ask(changes, by: session)
        }
    }

    /// The conferences among the items of `urn:xmpp:bookmarks:1`, oldest
    /// first; for a storage job.
    static func bookmarks(of username: String, in stores: Stores) throws -> [(id: String, payload: Element)] {
        try stores.pep.items(of: NS.bookmarks, owner: username, ids: nil, limit: nil).reversed().compactMap(parse)
    }

    /// What PEP is to be asked, worked out in a storage job from the
    /// stored set, so that the event loop neither parses nor compares it.
    struct Changes: Sendable {
        /// The items of `urn:xmpp:bookmarks:1` that are new or changed.
        var publish: [(id: String, payload: Element)] = []
        /// The ids of the items of `urn:xmpp:bookmarks:1` no longer listed.
        var retract: [String] = []
        /// The `<storage/>` for the node `storage:bookmarks`, if it is to
        /// get one.
        var legacyNode: LegacyNode?

        enum LegacyNode: Sendable {
            case publish(Element)
            /// The set, serialized with this many bytes, is bigger than
            /// `pep_max_item_size`.
            case tooBig(bytes: Int)
        }

        /// The changes that make `urn:xmpp:bookmarks:1` hold `wanted`
        /// (nil: what it holds already, which changed) and, with
        /// `mirroring`, the node `storage:bookmarks` too if the user has
        /// it and anything changed.
        init(
            of username: String, toHold wanted: [(id: String, payload: Element)]?, mirroring: Bool, maxItemSize: Int,
            in stores: Stores
        ) throws {
            if let wanted {
                let stored = try bookmarks(of: username, in: stores)
                let current = Dictionary(stored.map { ($0.id, $0.payload) }) { newest, _ in newest }
                publish = wanted.filter { id, payload in current[id].map(normalized) != payload }
                let kept = Set(wanted.map(\.id))
                retract = current.keys.sorted().filter { !kept.contains($0) }
            }
            let changed = wanted == nil || !publish.isEmpty || !retract.isEmpty
            guard mirroring, changed, try stores.pep.configuration(of: NS.bookmarksLegacy, owner: username) != nil else { return }
            let storage = legacyStorage(try wanted ?? bookmarks(of: username, in: stores))
            let bytes = StoredStanza.serialize(storage)?.utf8.count ?? .max
            legacyNode = bytes <= maxItemSize ? .publish(storage) : .tooBig(bytes: bytes)
        }
    }

    /// Refuses a set of bookmarks that PEP could not hold.
    private static func check(_ wanted: [(id: String, payload: Element)], against limits: ServerConfig.Limits) throws(StanzaError) {
        guard wanted.count <= limits.pepMaxItems else {
            throw StanzaError(.resourceConstraint, text: "at most \(limits.pepMaxItems) bookmarks may be stored")
        }
        for (id, payload) in wanted where (StoredStanza.serialize(payload)?.utf8.count ?? .max) > limits.pepMaxItemSize {
            throw StanzaError(.notAcceptable, text: "the bookmark of \(id) is larger than \(limits.pepMaxItemSize) bytes")
        }
    }

    /// Asks PEP for `changes`.
    private static func ask(_ changes: Changes, by session: ClientSession) {
        guard let owner = session.jid?.bare else { return }
        // XEP-0402 §5: as many items as allowed, no last item sent.
        let maxItems = session.server.config.limits.pepMaxItems
        for (id, payload) in changes.publish {
            publish(payload, id: id, to: NS.bookmarks, maxItems: maxItems, lastItemDelivery: .never, by: session)
        }
        for id in changes.retract {
            session.server.hooks.fire(PEPRetractRequest(owner: owner, node: NS.bookmarks, itemID: id, session: session))
        }
        switch changes.legacyNode {
        case .publish(let storage)?:
            // XEP-0048 §3: one item.
            publish(
                storage, id: "current", to: NS.bookmarksLegacy, maxItems: 1, lastItemDelivery: .onSubscriptionAndPresence,
                by: session)
        case .tooBig(let bytes)?:
            session.log.notice(
                "the bookmarks of \(owner) (\(bytes) bytes) are too big for the PEP node \(NS.bookmarksLegacy) "
                    + "(pep_max_item_size), which keeps its previous item")
        case nil:
            break
        }
    }

    /// Asks PEP to publish `payload` as item `id` of `node`, a node that
    /// is private (`whitelist`, XEP-0402 §5, XEP-0048 §3) even if a client
    /// created it otherwise.
    private static func publish(
        _ payload: Element, id: String, to node: String, maxItems: Int,
        lastItemDelivery: PEPNodeConfiguration.LastItemDelivery, by session: ClientSession
    ) {
        guard let owner = session.jid?.bare else { return }
        let configuration = PEPNodeConfiguration(
            accessModel: .whitelist, maxItems: maxItems, persistItems: true, lastItemDelivery: lastItemDelivery)
        let item = Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(payload)])
        session.server.hooks.fire(
            PEPPublishRequest(
                owner: owner, node: node, item: item, configuration: configuration, enforcesConfiguration: true,
                session: session))
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
    static func parse(_ item: PEPItem) -> (id: String, payload: Element)? {
        guard let payload = StoredStanza.parse(item.payload), payload.name == "conference",
            payload.namespace == NS.bookmarks
        else { return nil }
        return (item.id, payload)
    }
}
