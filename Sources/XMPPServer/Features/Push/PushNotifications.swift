import XMPPCore
import XMPPStorage

/// XEP-0357: Push Notifications. A mobile client enables a push service
/// (its app server's XMPP side, a component of this server) with
/// `<enable/>` to its own bare JID; from then on, a message that reaches
/// the user while the client cannot take it is announced to that service,
/// which wakes the app through Apple's or Google's push service.
///
/// A session that enabled push is kept for `push_resume_timeout` (72 hours)
/// once its connection drops, rather than `resume_timeout`: an iOS app is
/// suspended seconds after it leaves the screen, and resumes its session
/// when the user opens it, hours later. What arrives meanwhile is queued,
/// within `sm_max_unacked` (beyond it the session ends and its messages go
/// to offline storage), and delivered once, in order, on resumption.
/// Meanwhile its contacts see it `xa` (`push_hibernation_show`): its last
/// presence with that `<show/>`, as if the user had gone idle, and the
/// presence it had again once it is resumed.
///
/// When a notification goes out:
/// - to the registration of a session that enabled it, when a message is
///   queued for that session while it is detached (XEP-0198: its
///   connection dropped and it waits to be resumed);
/// - to every registration of the user, when a message is committed to
///   the user's offline storage (no resource could take it);
/// - for a presence subscription request, in the same two cases (with
///   `pending-subscription-count`);
/// - for a group chat message naming the occupant's nickname, to the
///   detached session that joined the room.
///
/// Only messages that matter to a person count: chat or normal ones with
/// a body or an encrypted payload (OMEMO). The notification carries the
/// `urn:xmpp:push:summary` form: the count of such messages waiting (in
/// the session since it detached, or in offline storage), the last one's
/// sender, and its body only when the operator allows it
/// (`push_include_body`); the client's publish options go with it, to the
/// push service only.
///
/// The push service is one of this server's components (`components`), or
/// its built-in APNs service (`apns_*`, at `apns.<domain>`), which sends to
/// Apple for the developer's own app: the node is then the app's device
/// token, in hex (`APNsClient`).
///
/// Choices where the XEP leaves room:
/// - The server does not federate, so a `jid` that is neither gets
///   `remote-server-not-found` at once rather than failing later.
/// - `<enable/>` without a `node` is accepted, with an empty node.
/// - Each account may enable `push_max_registrations` services (beyond:
///   `resource-constraint`); a service that answers `push_max_failures`
///   notifications in a row with an error is forgotten (§7.1); one that
///   is not connected, or does not answer within a minute, is not counted
///   against (the notification is lost, with a log line).
/// - A new password and deleting the account forget the registrations.
public struct PushNotifications: ServerFeature {
    private let settings: ServerConfig.PushSettings
    private let apnsService: String
    private let publisher = PushPublisher()

    /// The feature with `config`'s push settings.
    public init(config: ServerConfig) {
        settings = config.push
        apnsService = config.apnsService
    }

    /// The push service this session enabled, if any.
    enum Enabled: FeatureStateKey {
        static let initialValue: PushTarget? = nil
    }

    /// The presence a hibernating session showed before, to show again
    /// when it is resumed.
    enum PresenceBeforeHibernation: FeatureStateKey {
        static let initialValue: Element? = nil
    }

    /// How many messages were queued for the session since it detached.
    enum WaitingSinceDetached: FeatureStateKey {
        static let initialValue = 0
    }

    public func install(_ hooks: Hooks) {
        guard settings.enabled else {
            for name in ["enable", "disable"] {
                hooks.onIQ(.set, NS.push, name, to: [.account]) { _ in
                    throw StanzaError(.featureNotImplemented, text: "push notifications are off on this server")
                }
            }
            return
        }
        let (settings, publisher) = (settings, publisher)
        hooks.advertiseOnAccount(NS.push)
        if settings.apns.isEnabled { hooks.addServiceDomain(apnsService) }
        hooks.onStart { server in
            publisher.loadUsers(server)
            publisher.startAPNs(server)
        }
        hooks.onIQ(.set, NS.push, "enable", to: [.account]) { request in
            try Self.enable(request, settings: settings, publisher: publisher)
        }
        hooks.onIQ(.set, NS.push, "disable", to: [.account]) { request in
            try Self.disable(request, publisher: publisher)
        }
        hooks.keepDetached { session in session.state[Enabled.self] == nil ? nil : settings.resumeTimeout }
        if settings.hibernationShow != .unchanged {
            hooks.onDetached { session in Self.hibernate(session, show: settings.hibernationShow) }
        }
        hooks.onResumed { session in
            session.state[WaitingSinceDetached.self] = 0
            Self.wake(session)
        }
        hooks.onDeliver { element, session in
            // A connected session (nearly every delivery) costs one check.
            if session.isDetached, Self.isWorthWaking(element) {
                Self.announceToDetached(session, element, publisher: publisher, settings: settings)
            }
            return .passed
        }
        hooks.on(MessageStoredOffline.self) { stored in
            guard Self.isWorthWaking(stored.message.element), let username = stored.user.localpart else { return }
            publisher.notify(
                username, of: .message(stored.message.element, count: nil), settings: settings, server: stored.server)
        }
        hooks.on(GroupChatMention.self) { mention in
            let message = mention.message
            mention.server.sessions.session(mention.occupant)?.withSession { session in
                Self.announceToDetached(session, message, publisher: publisher, settings: settings)
            }
        }
        hooks.on(SubscriptionRequested.self) { request in
            Self.subscriptionRequested(request, settings: settings, publisher: publisher)
        }
        hooks.onComponentIQResponse { iq, server in publisher.answered(iq, settings: settings, server: server) }
    }

    /// `<enable/>` (§5): stores the service and node with the client's
    /// publish options, and marks the session as the one they wake.
    private static func enable(_ request: IQRequest, settings: ServerConfig.PushSettings, publisher: PushPublisher) throws
        -> IQAnswer
    {
        let username = try request.username()
        let element = request.iq.payload!
        let service = try Self.service(of: element)
        let config = request.server.config
        let node = element[attribute: "node"] ?? ""
        if config.push.apns.isEnabled, service.description == config.apnsService {
            guard (32...400).contains(node.count), node.count % 2 == 0, node.allSatisfy(\.isHexDigit) else {
                throw StanzaError(.badRequest, text: "the node of \(service) is the app's device token, in hex")
            }
        } else if !config.componentDomains.contains(service.domainpart) {
            throw StanzaError(
                .remoteServerNotFound,
                text: "this server does not federate: a push service must be one of its components")
        }
        var options: String?
        if let form = element.child("x", namespace: NS.dataForms) {
            // COMPAT: XMPPFramework's form (XMPPIQ+XEP_0357) has no `type`.
            guard let parsed = DataForm(form), parsed.type == nil || parsed.type == "submit",
                parsed.formType == NS.pubsubPublishOptions,
                let xml = StoredStanza.serialize(form)
            else {
                throw StanzaError(
                    .badRequest, text: "publish options are a submit form of type \(NS.pubsubPublishOptions)")
            }
            options = xml
        }
        let registration = PushRegistration(service: service.description, node: node, publishOptions: options)
        let limit = settings.maxRegistrations
        return .afterStorage({ stores in
            let stored = try stores.pushRegistrations.register(registration, for: username, maxRegistrations: limit)
            if stored { publisher.userRegistered(username) }
            return stored
        }) { stored in
            guard stored else {
                request.server.metrics.limitsHit.increment(.pushRegistrations)
                throw StanzaError(.resourceConstraint, text: "at most \(limit) push services may be enabled")
            }
            request.session.state[Enabled.self] = PushTarget(service: registration.service, node: node)
            request.session.log.info("push notifications to \(registration.service) enabled")
            return .result()
        }
    }

    /// `<disable/>` (§6): forgets the service's node, or all its nodes.
    private static func disable(_ request: IQRequest, publisher: PushPublisher) throws -> IQAnswer {
        let username = try request.username()
        let element = request.iq.payload!
        let service = try Self.service(of: element).description
        let node = element[attribute: "node"]
        return .afterStorage({ stores in
            try stores.pushRegistrations.remove(service: service, node: node, of: username)
            try publisher.forgetUnlessRegistered(username, stores)
        }) {
            if let enabled = request.session.state[Enabled.self], enabled.service == service,
                node == nil || enabled.node == node
            {
                request.session.state[Enabled.self] = nil
            }
            request.session.log.info("push notifications to \(service) disabled")
            return .result()
        }
    }

    /// The push service an `<enable/>` or `<disable/>` names.
    private static func service(of element: Element) throws(StanzaError) -> JID {
        guard let text = element[attribute: "jid"], let jid = try? JID(text) else {
            throw StanzaError(.badRequest, text: "<\(element.name)/> needs the push service's address in 'jid'")
        }
        return jid
    }

    /// Announces `message`, queued for `session`, if the session is
    /// detached and enabled push.
    private static func announceToDetached(
        _ session: ClientSession, _ message: Element, publisher: PushPublisher, settings: ServerConfig.PushSettings
    ) {
        guard session.isDetached, let target = session.state[Enabled.self], let username = session.username else { return }
        session.state[WaitingSinceDetached.self] += 1
        let notice = Notice.message(message, count: session.state[WaitingSinceDetached.self])
        publisher.notify(username, of: notice, only: target, settings: settings, server: session.server)
    }

    /// A session that enabled push detached: its available presence is
    /// broadcast again with `show` (the status kept), as if the client had
    /// gone idle, and the one it had is kept for its return.
    private static func hibernate(_ session: ClientSession, show: ServerConfig.HibernationShow) {
        guard session.state[Enabled.self] != nil, let presence = session.handle?.presence?.presence else { return }
        session.state[PresenceBeforeHibernation.self] = presence
        var idle = Element("presence", namespace: NS.client)
        idle.append(Element("show", namespace: NS.client, children: [.text(show.rawValue)]))
        for child in presence.elements where child.name != "show" && child.name != "delay" { idle.append(child) }
        session.server.router.route(idle, from: session)
    }

    /// A hibernating session was resumed: its presence before is broadcast
    /// again (the router drops the server's delay stamp).
    private static func wake(_ session: ClientSession) {
        guard let presence = session.state[PresenceBeforeHibernation.self] else { return }
        session.state[PresenceBeforeHibernation.self] = nil
        var again = presence
        again[attribute: "from"] = nil
        session.server.router.route(again, from: session)
    }

    /// Announces a subscription request to a user with no connected
    /// resource: to every registration when no session is left, else to
    /// those of the detached sessions that enabled push.
    private static func subscriptionRequested(
        _ request: SubscriptionRequested, settings: ServerConfig.PushSettings, publisher: PushPublisher
    ) {
        guard let username = request.user.localpart else { return }
        let server = request.server
        let notice = Notice.subscriptionRequest(from: request.contact)
        let sessions = server.sessions.sessions(of: request.user)
        guard !sessions.isEmpty else { return publisher.notify(username, of: notice, settings: settings, server: server) }
        for handle in sessions {
            handle.withSession { session in
                guard session.isDetached, let target = session.state[Enabled.self] else { return }
                publisher.notify(username, of: notice, only: target, settings: settings, server: session.server)
            }
        }
    }

    /// Whether `element` is a message a person would want to be woken for:
    /// chat or normal, with a body or an encrypted payload.
    private static func isWorthWaking(_ element: Element) -> Bool {
        guard let message = Message(element), message.type == .chat || message.type == .normal else { return false }
        return message.body != nil || element.elements.contains { $0.name == "encrypted" }
    }
}

/// A push service and node, as a session enabled them.
struct PushTarget: Sendable, Hashable {
    var service: String
    var node: String
}

/// What a notification announces.
enum Notice: Sendable {
    /// A message, and how many wait (nil: count the offline ones).
    case message(Element, count: Int?)
    /// A request to subscribe to the user's presence, from `contact`.
    case subscriptionRequest(from: JID)
}
