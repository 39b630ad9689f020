import XMPPCore
import XMPPStorage

/// XEP-0163: Personal Eventing Protocol. Every account's bare JID is a
/// pubsub service (XEP-0060) of which the user is the only publisher;
/// contacts who share presence with the user get its events, filtered by
/// the `NODE+notify` features of their XEP-0115 capabilities.
///
/// | request (`pubsub` namespace unless said) | by the owner                  | by anyone else                  |
/// |-------------------------------------------|-------------------------------|---------------------------------|
/// | `<publish>` (+ `<publish-options>`)       | stored (ids generated when none), node auto-created with the options, else `conflict` + `<precondition-not-met/>` if they differ; `resource-constraint` beyond `pep_quota`; notifications, then the result | `forbidden` |
/// | `<retract>`                               | removed; notifications with `notify='true'` or `pubsub#notify_retract` | `forbidden` |
/// | `<create>` (+ `<configure>` form)         | a node with the defaults or the form; `conflict` if it exists | `forbidden`  |
/// | `<items>` (`max_items`, `<item id/>`)     | the items, newest first, at most `pep_max_items` | the same if the access model allows: `presence` (default) the contacts with a `from`/`both` subscription, `open` anyone, `whitelist` no one; else `not-authorized` + `<presence-subscription-required/>` or `not-allowed` + `<closed-node/>` |
/// | `<subscribe jid>`, `<unsubscribe jid>`    | as for anyone else            | the requester's bare JID or a bound resource, if the access model lets it read; it gets every notification and, unless `never`, the last item at once; at most `pep_max_subscribers` per node (`policy-violation`) and `pep_max_subscriptions` per subscriber to others' nodes (`policy-violation` + `<too-many-subscriptions/>`) |
/// | `#owner` `<configure>`                    | get: the `pubsub#node_config` form; set: a submitted form applied | `forbidden` |
/// | `#owner` `<default>`                      | the form of a new node's configuration | `forbidden`             |
/// | `#owner` `<purge>`                        | items gone; `<purge/>` notifications; `PEPItemRetracted` for each | `forbidden` |
/// | `#owner` `<delete>`                       | node and items gone; `<delete/>` notifications; `PEPItemRetracted` for each | `forbidden` |
/// | disco#items of the account                | every node, a title as its name | to a contact with a `from`/`both` subscription, the nodes the access model lets it read; to anyone else `service-unavailable`, as for no account |
/// | anything else in either namespace         | `feature-not-implemented` + `<unsupported feature/>` (`subscription-options`, `retrieve-subscriptions`, `retrieve-affiliations`, ...) | the same, or `forbidden` for owner requests |
///
/// A node's configuration (`PEPNodeConfiguration`, XEP-0060 §16.4) holds
/// `access_model`, `max_items` (up to `pep_max_items`, which `max` stands
/// for; a node read after the limit is lowered has the limit),
/// `persist_items`, `send_last_published_item`, `notify_retract`,
/// `deliver_payloads`, `itemreply` and `title`; the other fields have
/// fixed values, which publish-options and forms may repeat. A
/// `whitelist` node is its owner's alone (XEP-0223 private storage).
///
/// Errors carry XEP-0060's `pubsub#errors` conditions: a missing node is
/// `item-not-found`, a request without `node` `bad-request` +
/// `<nodeid-required/>`; a node name, item id or title longer than
/// `pep_max_name_size` is `not-acceptable`. An unknown account, or one that blocks the
/// requester, is `service-unavailable` (RFC 6121 §8.5.1, XEP-0191 §3.3).
///
/// Notifications (`<message type='headline'>` from the owner's bare JID)
/// go to each available resource, of the owner or of a contact sharing
/// presence (the owner's only for `whitelist`), whose capabilities want
/// the node, and to the resources of the subscribers the access model
/// still lets in, each resource once; `EntityCapsTracker` learns them from broadcast presence,
/// asking unknown ones from the account's bare JID. A resource that
/// becomes interested in a node, and the resources of a contact whose
/// subscription is approved (`PresenceSubscriptionApproved`), get its
/// last item at once (XEP-0163 §4.3.4), with `<delay/>`, unless the node
/// says `send_last_published_item` `never`.
///
/// Other features read and change PEP through events only
/// (`PEPEvents.swift`): `PEPItemPublished` and `PEPItemRetracted` after
/// each change (one `PEPItemRetracted` per item a purge or delete removes), `PEPPublishRequest` and `PEPRetractRequest` for changes
/// on the owner's behalf (`PEP+OnBehalf.swift`).
public struct PEP: ServerFeature {
    /// The XEP-0060 features a PEP service of Swiftlet supports
    /// (`http://jabber.org/protocol/pubsub#` + each).
    static let features = [
        "access-open", "access-presence", "access-whitelist", "auto-create", "auto-subscribe", "config-node",
        "create-and-configure", "create-nodes", "delete-items", "delete-nodes", "filtered-notifications",
        "item-ids", "last-published", "multi-items", "persistent-items", "publish", "publish-options",
        "purge-nodes", "retract-items", "retrieve-default", "retrieve-items", "subscribe",
    ]

    /// The requests Swiftlet does not implement, by namespace and element,
    /// with the XEP-0060 feature each one needs (§5.1's table).
    private static let unsupported: [String: [String: String]] = [
        NS.pubsub: [
            "options": "subscription-options",
            "subscriptions": "retrieve-subscriptions", "affiliations": "retrieve-affiliations",
            "default": "retrieve-default-sub",
        ],
        NS.pubsubOwner: ["subscriptions": "manage-subscriptions", "affiliations": "modify-affiliations"],
    ]

    /// The `pubsub` set requests others than the owner may make.
    private static let subscriberOperations: Set<String> = ["subscribe", "unsubscribe", "options"]

    let caps: EntityCapsTracker

    /// The feature, with a cache of `capsCacheSize` verified XEP-0115 `ver`s.
    public init(capsCacheSize: Int = 1000) {
        caps = EntityCapsTracker(capacity: capsCacheSize)
    }

    public func install(_ hooks: Hooks) {
        hooks.advertiseIdentityOnAccount(DiscoIdentity(category: "pubsub", type: "pep"))
        for feature in Self.features { hooks.advertiseOnAccount(NS.pubsub + "#" + feature) }
        for type in [IQ.IQType.get, .set] {
            hooks.onIQ(type, NS.pubsub, "pubsub", to: [.account, .user]) { request in try self.handle(request) }
            hooks.onIQ(type, NS.pubsubOwner, "pubsub", to: [.account, .user]) { request in try self.handle(request) }
        }
        hooks.onIQ(.get, NS.discoItems, "query", to: [.account, .user]) { request in try self.nodes(request) }
        hooks.onBroadcastPresence { presence, session in self.presenceChanged(presence, of: session) }
        hooks.onSessionEnded { session in
            if let jid = session.jid { self.caps.remove(jid) }
        }
        hooks.onIQResponse { iq, session in self.capsAnswered(iq, from: session) }
        hooks.on(PresenceSubscriptionApproved.self) { approved in
            self.sendLastItems(of: approved.user, toNewSubscriber: approved.contact, server: approved.server)
        }
        hooks.on(PEPPublishRequest.self) { request in self.publish(request) }
        hooks.on(PEPRetractRequest.self) { request in self.retract(request) }
    }

    /// Sends a request to its handler.
    private func handle(_ request: IQRequest) throws -> IQAnswer {
        let pubsub = request.iq.payload!
        // <publish-options/> goes with <publish/>, <configure/> with <create/>.
        let operations = pubsub.elements.filter {
            !($0.namespace == NS.pubsub && ($0.name == "publish-options" || $0.name == "configure"))
        }
        guard operations.count == 1, let operation = operations.first, operation.namespace == pubsub.namespace else {
            throw StanzaError(.badRequest, text: "a pubsub request holds one operation")
        }
        // Subscribers' requests are not the owner's.
        let ownersOnly =
            pubsub.namespace == NS.pubsubOwner
            || (request.iq.type == .set && !Self.subscriberOperations.contains(operation.name))
        if ownersOnly, request.target.localpart != request.session.jid?.localpart {
            throw StanzaError(.forbidden, text: "only the account's owner may do this")
        }
        switch (request.iq.type, pubsub.namespace, operation.name) {
        case (.set, NS.pubsub, "publish"):
            return try publish(operation, options: pubsub.child("publish-options", namespace: NS.pubsub), request)
        case (.set, NS.pubsub, "retract"):
            return try retract(operation, request)
        case (.set, NS.pubsub, "create"):
            return try create(operation, configure: pubsub.child("configure", namespace: NS.pubsub), request)
        case (.get, NS.pubsub, "items"):
            return try items(operation, request)
        case (.set, NS.pubsub, "subscribe"):
            return try subscribe(operation, request)
        case (.set, NS.pubsub, "unsubscribe"):
            return try unsubscribe(operation, request)
        case (.set, NS.pubsubOwner, "delete"):
            return try delete(operation, request)
        case (.set, NS.pubsubOwner, "purge"):
            return try purge(operation, request)
        case (_, NS.pubsubOwner, "configure"):
            return try configure(operation, request)
        case (.get, NS.pubsubOwner, "default"):
            let form = Self.configurationForm(PEPNodeConfiguration(), maxItemsLimit: request.server.config.limits.pepMaxItems)
            let answer = Element("default", namespace: NS.pubsubOwner, children: [.element(form.element)])
            return .result(Element("pubsub", namespace: NS.pubsubOwner, children: [.element(answer)]))
        default:
            if let feature = Self.unsupported[pubsub.namespace]?[operation.name] {
                throw Self.unsupported(feature)
            }
            throw StanzaError(.badRequest, text: "not a pubsub \(request.iq.type?.rawValue ?? "") request")
        }
    }

    /// The node named by `operation`'s `node`; none is `bad-request` +
    /// `<nodeid-required/>` (XEP-0060 §7.1.3.3).
    static func node(of operation: Element) throws(StanzaError) -> String {
        guard let node = operation[attribute: "node"], !node.isEmpty else { throw error(.badRequest, "nodeid-required") }
        return node
    }

    /// Throws `not-acceptable` when `value` (a node name, an item id, a
    /// title) is longer than `pep_max_name_size` bytes: nodes and items
    /// are stored and listed by them.
    static func checkSize(_ value: String, of what: String, limits: ServerConfig.Limits) throws(StanzaError) {
        guard value.utf8.count <= limits.pepMaxNameSize else {
            throw StanzaError(.notAcceptable, text: "\(what) is at most \(limits.pepMaxNameSize) bytes")
        }
    }

    /// `configuration` with `max_items` at most `pep_max_items`: a node
    /// keeps no more once the limit is lowered.
    static func clamped(_ configuration: PEPNodeConfiguration, limits: ServerConfig.Limits) -> PEPNodeConfiguration {
        var clamped = configuration
        clamped.maxItems = min(configuration.maxItems, limits.pepMaxItems)
        return clamped
    }

    /// An error with the XEP-0060 application condition `condition` (in
    /// `pubsub#errors`).
    static func error(
        _ defined: StanzaError.Condition, type: StanzaError.ErrorType? = nil, _ condition: String, text: String? = nil
    ) -> StanzaError {
        StanzaError(defined, type: type, text: text, applicationCondition: Element(condition, namespace: NS.pubsubErrors))
    }

    /// `feature-not-implemented` + `<unsupported feature/>` (XEP-0060 §5.1).
    static func unsupported(_ feature: String, _ defined: StanzaError.Condition = .featureNotImplemented) -> StanzaError {
        StanzaError(
            defined, type: defined == .featureNotImplemented ? .cancel : nil,
            applicationCondition: Element("unsupported", namespace: NS.pubsubErrors, attributes: ["feature": feature]))
    }
}
