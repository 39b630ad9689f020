import Synchronization
import XMPPCore

/// XEP-0280: Message Carbons (`urn:xmpp:carbons:2`). A resource enables
/// carbons for its session (XMPPFramework does so right after login,
/// without disco); from then on it gets a copy of every eligible message
/// its user sends from another resource (`<sent/>`) or receives on
/// another resource (`<received/>`), wrapped in an XEP-0297
/// `<forwarded/>`, from the user's bare JID and to its own full JID (§7,
/// §8). The flag is session state (`Enabled`), so it goes with the session.
///
/// On the routing path: an `onMessage` handler at priority 50 (after the
/// archive's ids, before delivery) removes `<private/>` and sends the
/// `<sent/>` copies; `MessageDelivered` brings the `<received/>` copies,
/// for the resources that did not get the message itself. Both look no
/// further for a user none of whose resources has carbons on.
///
/// Choices where the XEP leaves room:
/// - Eligible (§6): type `chat`, and type `normal` with a `<body/>`, as
///   Prosody does; never `error`, `groupchat` or `headline`, and never a
///   message with `<private xmlns='urn:xmpp:carbons:2'/>`, XEP-0334
///   `<no-copy/>`, or a carbon inside (a client forwarding one).
/// - `<private/>` is removed before delivery to the recipient (§9).
/// - A received message goes to storage, not to carbons, when the user
///   has no resource to take it (XEP-0160): the resources that have
///   carbons on get it once, at their next initial presence, not twice.
public struct Carbons: ServerFeature {
    /// How many resources of each user have carbons on, so that routing
    /// skips every copy check for the users (most) who have none.
    private let users = CarbonsUsers()

    public init() {}

    /// Whether the resource enabled carbons.
    enum Enabled: FeatureStateKey {
        static let initialValue = false
    }

    /// Whether a routed message carried `<private/>`, which delivery no
    /// longer shows (§9): it gets no copies.
    enum WasPrivate: FeatureStateKey {
        static let initialValue = false
    }

    public func install(_ hooks: Hooks) {
        let users = users
        hooks.advertise(NS.carbons)
        // §5, §10.1: enabling or disabling again is no error.
        hooks.onIQ(.set, NS.carbons, "enable", to: [.account]) { request in
            Self.enable(request.session, username: try request.username(), users: users)
            return .result()
        }
        // XEP-0386: enabled inside Bind 2, which needs no answer.
        hooks.onBindInline(NS.carbons, "enable") { _, session in
            if let username = session.username { Self.enable(session, username: username, users: users) }
            return nil
        }
        hooks.onIQ(.set, NS.carbons, "disable", to: [.account]) { request in
            let username = try request.username()
            if request.session.state[Enabled.self] { users.remove(username) }
            request.session.state[Enabled.self] = false
            return .result()
        }
        hooks.onSessionEnded { session in
            if session.state[Enabled.self], let username = session.username { users.remove(username) }
        }
        hooks.onMessage(to: [.bare, .full], priority: 50) { message in
            Self.copySent(&message, users: users)
            return .passed
        }
        hooks.on(MessageDelivered.self) { delivery in Self.copyReceived(delivery, users: users) }
    }

    private static func enable(_ session: ClientSession, username: String, users: CarbonsUsers) {
        if !session.state[Enabled.self] { users.add(username) }
        session.state[Enabled.self] = true
    }

    /// Whether `message` is eligible (§6), and whether it is `<private/>`.
    private static func eligibility(of message: Element) -> (isEligible: Bool, isPrivate: Bool) {
        var isPrivate = false
        var excluded = false
        for child in message.elements {
            switch (child.namespace, child.name) {
            case (NS.carbons, "private"): isPrivate = true
            case (NS.carbons, "sent"), (NS.carbons, "received"), (NS.hints, "no-copy"): excluded = true
            default: break
            }
        }
        guard !isPrivate, !excluded, let message = Message(message) else { return (false, isPrivate) }
        switch message.type {
        case .chat: return (true, false)
        case .normal: return (message.body != nil, false)
        case .error, .groupchat, .headline: return (false, false)
        }
    }

    /// §8, §9: removes `<private/>` (noting that it was there), and sends
    /// a `<sent/>` copy of an eligible message to each of the sender's
    /// other resources with carbons on.
    private static func copySent(_ routed: inout RoutedMessage, users: CarbonsUsers) {
        let (isEligible, isPrivate) = eligibility(of: routed.element)
        if isPrivate {
            routed.element.removeChildren("private", namespace: NS.carbons)
            routed.notes[WasPrivate.self] = true
        }
        guard isEligible, let username = routed.sender.localpart, users.haveCarbons(username) else { return }
        var original = routed.element
        if original[attribute: "to"] == nil { original[attribute: "to"] = routed.recipient.description }
        send("sent", original, of: routed.sender.bare, skipping: [routed.sender], server: routed.server)
    }

    /// §7: a `<received/>` copy of a delivered message, for each of the
    /// user's other resources with carbons on.
    private static func copyReceived(_ delivery: MessageDelivered, users: CarbonsUsers) {
        let message = delivery.message
        guard let username = delivery.user.localpart, users.haveCarbons(username), !message.notes[WasPrivate.self],
            eligibility(of: message.element).isEligible
        else { return }
        send("received", message.element, of: delivery.user, skipping: delivery.resources, server: message.server)
    }

    private static func send(_ kind: String, _ message: Element, of user: JID, skipping: [JID], server: ServerContext) {
        let targets = server.sessions.sessions(of: user) { !skipping.contains($0.jid) }
        guard !targets.isEmpty else { return }
        let forwarded = Element("forwarded", namespace: NS.forward, children: [.element(message)])
        var carbon = Element("message", namespace: NS.client, attributes: ["from": user.description])
        carbon[attribute: "type"] = message[attribute: "type"]
        carbon.append(Element(kind, namespace: NS.carbons, children: [.element(forwarded)]))
        for handle in targets {
            carbon[attribute: "to"] = handle.jid.description
            let copy = carbon
            handle.withSession { session in
                if session.state[Enabled.self] { session.deliver(copy) }
            }
        }
    }
}

/// The users with at least one resource that has carbons on, counted per
/// user; shared by every loop.
private final class CarbonsUsers: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func add(_ username: String) {
        counts.withLock { $0[username, default: 0] += 1 }
    }

    func remove(_ username: String) {
        counts.withLock { counts in
            guard let count = counts[username] else { return }
            counts[username] = count > 1 ? count - 1 : nil
        }
    }

    func haveCarbons(_ username: String) -> Bool {
        counts.withLock { $0[username] != nil }
    }
}
