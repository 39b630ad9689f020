import XMPPCore

/// A server feature: one spec, one file, installed into the hooks at start
/// (Prosody's modules, in typed form).
public protocol ServerFeature: Sendable {
    /// Registers the feature's handlers, disco features and stream features.
    func install(_ hooks: Hooks)
}

/// Whom an IQ is addressed to, as the router resolved it.
public enum IQTarget: Hashable, Sendable {
    /// The server's domain.
    case host
    /// The sender's own account: its bare JID, or no `to` at all
    /// (RFC 6120 §10.3.3: the server answers on the account's behalf).
    case account
    /// Another local account's bare JID.
    case user
    /// Any address, from a client that has not authenticated yet (only
    /// in-band registration answers these).
    case unauthenticated
    /// A service of this server at a domain of its own, such as
    /// `upload.localhost` (XEP-0363): the bare domain given here, lowercased.
    /// Registering a handler for it makes the domain a local service.
    case service(String)
}

/// An IQ request on its way to a handler, with the means to answer it.
public struct IQRequest {
    /// The request; `from` is already stamped with the sender's JID.
    public let iq: IQ
    /// The entity it is addressed to: the domain, or a bare JID.
    public let target: JID
    /// The session it came from.
    public let session: ClientSession

    /// The server the request arrived at.
    public var server: ServerContext { session.server }

    /// Answers with a result (RFC 6120 §8.2.3); `answer` does this for
    /// handlers.
    func reply(_ payload: Element? = nil) {
        session.send(fromTarget(iq.result(payload: payload)))
    }

    /// Answers with an error (RFC 6120 §8.3); `answer` does this for
    /// handlers.
    func fail(_ error: StanzaError) {
        if let reply = iq.errorReply(error) { session.send(fromTarget(reply)) }
    }

    /// `reply`, `from` the account's bare JID when the request had no `to`
    /// and was handled on the account's behalf (RFC 6120 §8.1.2.1, as
    /// Prosody and ejabberd answer).
    private func fromTarget(_ reply: Element) -> Element {
        guard iq.element[attribute: "to"] == nil, target.localpart != nil else { return reply }
        var reply = reply
        reply[attribute: "from"] = target.description
        return reply
    }
}

/// An entry of the server's disco#items (XEP-0030 §4): a service at its
/// own address.
public struct DiscoItem: Sendable, Hashable {
    /// The service's address, such as `upload.localhost`.
    public var jid: String
    /// Its human-readable name.
    public var name: String?

    /// An item for `jid` named `name`.
    public init(jid: String, name: String? = nil) {
        self.jid = jid
        self.name = name
    }
}

/// An identity of XEP-0030 disco#info (§3.1): what kind of entity answers.
public struct DiscoIdentity: Sendable, Hashable {
    /// The category, such as `pubsub`.
    public var category: String
    /// The type within the category, such as `pep`.
    public var type: String

    /// An identity of `category` and `type`.
    public init(category: String, type: String) {
        self.category = category
        self.type = type
    }
}

/// Handles an IQ request: returns its answer (`IQAnswer`), or throws the
/// error to answer with.
public typealias IQHandler = @Sendable (IQRequest) throws -> IQAnswer

/// What the features installed: handlers by event, disco features, stream
/// features. Built once at start, then shared read-only by every loop.
///
/// A class, so that the routing path reaches its tables without copying
/// them. `@unchecked Sendable` is sound because it changes only while
/// `init` runs the features' `install` (each installing method checks
/// that), before any loop can see it.
public final class Hooks: @unchecked Sendable {
    private struct IQKey: Hashable {
        var type: IQ.IQType
        var namespace: String
        var name: String
        var target: IQTarget
    }

    private struct NonzaKey: Hashable {
        var namespace: String
        var name: String
    }

    private var iqHandlers: [IQKey: IQHandler] = [:]
    /// By service domain: the handler of the get/set IQs to it, or to an
    /// address at it, that no `iqHandlers` entry takes.
    private var serviceIQHandlers: [String: IQHandler] = [:]
    /// By node: the handler of disco#info and disco#items queries to the
    /// server's domain for that node (`onHostDiscoNode`).
    private var hostDiscoNodeHandlers: [String: IQHandler] = [:]
    private var nonzaHandlers: [NonzaKey: @Sendable (Element, ClientSession) -> Void] = [:]
    private var streamFeatureProviders: [@Sendable (ClientSession) -> Element?] = []
    private var detachedLifetimeProviders: [@Sendable (ClientSession) -> Duration?] = []
    private var detachedHandlers: [@Sendable (ClientSession) -> Void] = []
    private var resumedHandlers: [@Sendable (ClientSession) -> Void] = []
    private var bindInlineHandlers: [NonzaKey: @Sendable (Element, ClientSession) -> Element?] = [:]
    /// The features a Bind 2 request may enable, by namespace (XEP-0386).
    public private(set) var bindInlineFeatures: [String] = []
    private var authenticatedHandlers: [@Sendable (ClientSession) -> Void] = []
    private var boundHandlers: [@Sendable (ClientSession) -> Void] = []
    private var endedHandlers: [@Sendable (ClientSession) -> Void] = []
    private var broadcastPresenceHandlers: [@Sendable (Presence, ClientSession) -> Void] = []
    private var responseHandlers: [@Sendable (IQ, ClientSession) -> Bool] = []
    private var componentResponseHandlers: [@Sendable (IQ, ServerContext) -> Bool] = []
    private var startHandlers: [@Sendable (ServerContext) -> Void] = []
    private var stopHandlers: [@Sendable (ServerContext) -> Void] = []
    // The stanza events (`StanzaEvents.swift`) and typed events
    // (`ServerEvents.swift`), each list sorted by priority at the end of `init`.
    var preRouteHandlers: [Prioritized<@Sendable (RoutedStanza) -> Handling>] = []
    var messageHandlers: [MessageTarget: [Prioritized<@Sendable (inout RoutedMessage) -> Handling>]] = [:]
    var presenceHandlers: [PresenceTarget: [Prioritized<@Sendable (RoutedPresence) -> Handling>]] = [:]
    var offlineHandlers: [Prioritized<@Sendable (UndeliveredMessage) -> Handling>] = []
    var deliveryFilters: [@Sendable (Element, ClientSession) -> Handling] = []
    /// By event type: that type's `EventObservers<Event>`, kept sorted as
    /// observers are added (`on`).
    var eventObservers: [ObjectIdentifier: AnyObject] = [:]
    /// How many handlers were installed, to keep install order among
    /// handlers of one priority.
    var installed = 0
    /// The `var`s of XEP-0030 `<feature/>`s the server supports, sorted.
    public private(set) var discoFeatures: [String] = []
    /// The `var`s of the `<feature/>`s a user's account (its bare JID)
    /// supports, sorted.
    public private(set) var accountDiscoFeatures: [String] = []
    /// The identities a user's account answers with besides
    /// `account/registered`, in the order the features added them.
    public private(set) var accountDiscoIdentities: [DiscoIdentity] = []
    /// The services the server's disco#items lists (XEP-0030 §4), in the
    /// order the features added them.
    public private(set) var discoItems: [DiscoItem] = []
    /// The XEP-0128 forms (`<x xmlns='jabber:x:data' type='result'/>`) the
    /// server's disco#info carries after its features, in the order the
    /// features added them.
    public private(set) var discoForms: [Element] = []
    /// Domains other than the served one that the server answers for
    /// itself (`upload.localhost`); stanzas to them never leave the server.
    public private(set) var serviceDomains: Set<String> = []

    /// Creates hooks with `features` installed.
    public init(_ features: [any ServerFeature]) {
        for feature in features { feature.install(self) }
        sortByPriority()
        discoFeatures.sort()
        accountDiscoFeatures.sort()
        isInstalling = false
    }

    /// True until `init` has installed every feature.
    private var isInstalling = true

    /// Traps when a handler is installed after the server started.
    func checkInstalling(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isInstalling, "hooks are installed only by ServerFeature.install", file: file, line: line)
    }

    // MARK: - Installing

    /// Lists `feature` in the server's disco#info.
    public func advertise(_ feature: String) {
        checkInstalling()
        if !discoFeatures.contains(feature) { discoFeatures.append(feature) }
    }

    /// Lists `feature` in the disco#info of every account (XEP-0030 §3.1:
    /// what the server answers on behalf of a bare JID).
    public func advertiseOnAccount(_ feature: String) {
        checkInstalling()
        if !accountDiscoFeatures.contains(feature) { accountDiscoFeatures.append(feature) }
    }

    /// Lists `identity` in the disco#info of every account, after
    /// `account/registered` (XEP-0163 §6.1: `pubsub/pep`).
    public func advertiseIdentityOnAccount(_ identity: DiscoIdentity) {
        checkInstalling()
        if !accountDiscoIdentities.contains(identity) { accountDiscoIdentities.append(identity) }
    }

    /// Adds `form`, an XEP-0128 extended-information form with a
    /// `FORM_TYPE`, to the server's disco#info (XEP-0157 contact addresses).
    public func advertiseForm(_ form: Element) {
        checkInstalling()
        discoForms.append(form)
    }

    /// Lists `item` in the server's disco#items (XEP-0030 §4.1: "the
    /// server SHOULD list the services it hosts").
    public func advertiseItem(_ item: DiscoItem) {
        checkInstalling()
        if !discoItems.contains(item) { discoItems.append(item) }
    }

    /// Makes `domain` a local service: stanzas addressed to it are the
    /// server's to answer (an IQ nobody handles gets `service-unavailable`),
    /// not `remote-server-not-found`. `onIQ(_:_:_:to:_:)` with a
    /// `.service` target does this itself.
    public func addServiceDomain(_ domain: String) {
        checkInstalling()
        serviceDomains.insert(domain.lowercased())
    }

    /// Handles IQs of `type` whose payload is `name` in `namespace`,
    /// addressed to any of `targets`.
    public func onIQ(
        _ type: IQ.IQType, _ namespace: String, _ name: String, to targets: [IQTarget],
        _ handler: @escaping IQHandler
    ) {
        checkInstalling()
        for target in targets {
            if case .service(let domain) = target { addServiceDomain(domain) }
            let key = IQKey(type: type, namespace: namespace, name: name, target: target)
            precondition(iqHandlers[key] == nil, "two features handle \(key)")
            iqHandlers[key] = handler
        }
    }

    /// Handles every get/set IQ to `domain`, or to an address at it (a
    /// group chat room, `room@conference.localhost/nick`), that no `onIQ`
    /// handler takes: a service whose addresses are its own to answer.
    /// Makes `domain` a local service.
    public func onAnyIQ(at domain: String, _ handler: @escaping IQHandler) {
        checkInstalling()
        let domain = domain.lowercased()
        addServiceDomain(domain)
        precondition(serviceIQHandlers[domain] == nil, "two features handle every IQ to \(domain)")
        serviceIQHandlers[domain] = handler
    }

    /// Answers disco#info and disco#items queries to the server's domain
    /// that name `node` (XEP-0030 §3.2, §4.2), such as the ad-hoc command
    /// list (XEP-0050 §2.2); `Disco` answers a query without a node, and
    /// one for a node nobody handles with `item-not-found`.
    public func onHostDiscoNode(_ node: String, _ handler: @escaping IQHandler) {
        checkInstalling()
        precondition(hostDiscoNodeHandlers[node] == nil, "two features answer disco node \(node)")
        hostDiscoNodeHandlers[node] = handler
    }

    /// Handles a top-level non-stanza element (CSI, stream management).
    public func onNonza(
        _ namespace: String, _ name: String, _ handler: @escaping @Sendable (Element, ClientSession) -> Void
    ) {
        checkInstalling()
        nonzaHandlers[NonzaKey(namespace: namespace, name: name)] = handler
    }

    /// Lets the client enable a feature for its session inside a Bind 2
    /// request (XEP-0386): `handler` gets the request's child named
    /// `name` in `namespace` once the resource is bound, and returns what
    /// goes in `<bound/>`, if anything. `namespace` is advertised as an
    /// inline feature of `<bind/>`.
    public func onBindInline(
        _ namespace: String, _ name: String, _ handler: @escaping @Sendable (Element, ClientSession) -> Element?
    ) {
        checkInstalling()
        bindInlineHandlers[NonzaKey(namespace: namespace, name: name)] = handler
        if !bindInlineFeatures.contains(namespace) { bindInlineFeatures.append(namespace) }
    }

    /// Adds to `<stream:features/>` what `provider` returns for a session's
    /// current state (nil for nothing).
    public func streamFeature(_ provider: @escaping @Sendable (ClientSession) -> Element?) {
        checkInstalling()
        streamFeatureProviders.append(provider)
    }

    /// Runs `handler` when a session has authenticated (SASL succeeded),
    /// before the client can bind: a handler that loads per-user state
    /// with `ClientSession.withStorage` holds the session's input, binding
    /// included, until the state is there.
    public func onAuthenticated(_ handler: @escaping @Sendable (ClientSession) -> Void) {
        checkInstalling()
        authenticatedHandlers.append(handler)
    }

    /// Runs `handler` when a session binds a resource.
    public func onSessionBound(_ handler: @escaping @Sendable (ClientSession) -> Void) {
        checkInstalling()
        boundHandlers.append(handler)
    }

    /// Runs `handler` when a session ends, however it ends.
    public func onSessionEnded(_ handler: @escaping @Sendable (ClientSession) -> Void) {
        checkInstalling()
        endedHandlers.append(handler)
    }

    /// Runs `handler` on each available or unavailable presence a bound
    /// session broadcasts (no `to`, RFC 6121 §4.2, §4.4, §4.5), once the
    /// resource's availability is recorded: it observes, it cannot stop it.
    public func onBroadcastPresence(_ handler: @escaping @Sendable (Presence, ClientSession) -> Void) {
        checkInstalling()
        broadcastPresenceHandlers.append(handler)
    }

    /// Runs `handler` on each result or error IQ a bound session sends to
    /// the server's domain or to a bare JID of it: the answers to requests
    /// the server sent, as itself or as an account's service. A
    /// handler returns true when the answer was its own; the others are
    /// dropped (RFC 6120 §8.2.3: no answer to an answer).
    public func onIQResponse(_ handler: @escaping @Sendable (IQ, ClientSession) -> Bool) {
        checkInstalling()
        responseHandlers.append(handler)
    }

    /// Lets a feature keep a session whose connection dropped longer than
    /// its stream management resumption window: `provider` returns how
    /// long (nil: the window). The longest answer wins; a shorter one
    /// changes nothing.
    public func keepDetached(_ provider: @escaping @Sendable (ClientSession) -> Duration?) {
        checkInstalling()
        detachedLifetimeProviders.append(provider)
    }

    /// Runs `handler` when a session's connection dropped and the session
    /// waits to be resumed (XEP-0198), its queue taking what comes for it.
    public func onDetached(_ handler: @escaping @Sendable (ClientSession) -> Void) {
        checkInstalling()
        detachedHandlers.append(handler)
    }

    /// Runs `handler` when a detached session was resumed on a new
    /// connection, after `<resumed/>` went out.
    public func onResumed(_ handler: @escaping @Sendable (ClientSession) -> Void) {
        checkInstalling()
        resumedHandlers.append(handler)
    }

    /// Runs `handler` on each result or error IQ a connected component
    /// sends to the server's domain: the answers to requests the server
    /// sent it (a push notification, XEP-0357). A handler returns true when
    /// the answer was its own; the others are dropped.
    public func onComponentIQResponse(_ handler: @escaping @Sendable (IQ, ServerContext) -> Bool) {
        checkInstalling()
        componentResponseHandlers.append(handler)
    }

    /// Runs `handler` once, on the loop, when the server starts, before
    /// any client can connect: for loading state and starting timers.
    public func onStart(_ handler: @escaping @Sendable (ServerContext) -> Void) {
        checkInstalling()
        startHandlers.append(handler)
    }

    /// Runs `handler` once, on the first loop, when the server stops: after
    /// every stream was told to end and given up to a second for its
    /// goodbye (whether or not it has ended), before storage closes; for
    /// writing out what waits in memory.
    public func onStop(_ handler: @escaping @Sendable (ServerContext) -> Void) {
        checkInstalling()
        stopHandlers.append(handler)
    }

    // MARK: - Firing

    /// Whether `domain` (a normalized domainpart) is one of the server's
    /// own services.
    func isServiceDomain(_ domain: String) -> Bool {
        serviceDomains.contains(domain)
    }

    func iqHandler(_ type: IQ.IQType, _ payload: Element, _ target: IQTarget) -> IQHandler? {
        iqHandlers[IQKey(type: type, namespace: payload.namespace, name: payload.name, target: target)]
    }

    /// The handler of disco queries to the server for `node`, if any.
    func hostDiscoNodeHandler(_ node: String) -> IQHandler? {
        hostDiscoNodeHandlers[node]
    }

    /// The handler of IQs to `domain` or an address at it that no other
    /// handler takes (`onAnyIQ`).
    func serviceIQHandler(_ domain: String) -> IQHandler? {
        serviceIQHandlers[domain]
    }

    func sessionDetached(_ session: ClientSession) {
        for handler in detachedHandlers { handler(session) }
    }

    func sessionResumed(_ session: ClientSession) {
        for handler in resumedHandlers { handler(session) }
    }

    /// The longest time a feature keeps `session` detached, if any does.
    func detachedLifetime(of session: ClientSession) -> Duration? {
        detachedLifetimeProviders.compactMap { $0(session) }.max()
    }

    func streamFeatures(for session: ClientSession) -> [Element] {
        streamFeatureProviders.compactMap { $0(session) }
    }

    /// Runs the nonza's handler; false when no feature takes it.
    func handleNonza(_ element: Element, session: ClientSession) -> Bool {
        guard let handler = nonzaHandlers[NonzaKey(namespace: element.namespace, name: element.name)] else {
            return false
        }
        handler(element, session)
        return true
    }

    /// Enables the feature a Bind 2 request's child asks for; nil when no
    /// feature takes it, or it has nothing to say in `<bound/>`.
    func enableInline(_ element: Element, session: ClientSession) -> Element? {
        bindInlineHandlers[NonzaKey(namespace: element.namespace, name: element.name)]?(element, session)
    }

    func sessionAuthenticated(_ session: ClientSession) {
        for handler in authenticatedHandlers { handler(session) }
    }

    func sessionBound(_ session: ClientSession) {
        for handler in boundHandlers { handler(session) }
    }

    func sessionEnded(_ session: ClientSession) {
        for handler in endedHandlers { handler(session) }
    }

    /// Tells the presence observers of a broadcast presence.
    func broadcastPresence(_ presence: Presence, from session: ClientSession) {
        for handler in broadcastPresenceHandlers { handler(presence, session) }
    }

    /// Hands an answer to the server's request to the feature that sent it.
    func iqResponse(_ iq: IQ, from session: ClientSession) {
        for handler in responseHandlers where handler(iq, session) { return }
    }

    /// Hands a component's answer to the server's request to the feature
    /// that sent it.
    func componentIQResponse(_ iq: IQ, server: ServerContext) {
        for handler in componentResponseHandlers where handler(iq, server) { return }
    }

    /// Runs the start handlers; the server calls it once, on the loop.
    public func serverStarted(_ context: ServerContext) {
        for handler in startHandlers { handler(context) }
    }

    /// Runs the stop handlers; the server calls it once, on the loop.
    public func serverStopping(_ context: ServerContext) {
        for handler in stopHandlers { handler(context) }
    }
}
