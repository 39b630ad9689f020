import XMPPCore

/// XEP-0352: Client State Indication. A client says whether its user is
/// looking (`<active/>`) or not (`<inactive/>`). While a client is
/// inactive, contacts' presence updates are held (only the latest of each
/// resource is kept) and sent together just before anything else goes to
/// the client — a message, a subscription request, an IQ — or when it
/// becomes active again, so an idle phone's radio wakes for what matters.
///
/// The hold is a delivery filter (`Hooks.onDeliver`): it sees every
/// stanza on its way to the client.
///
/// COMPAT: XMPPFramework: apps send these without checking the stream
/// feature, and an unknown top-level element would end the stream, so they
/// are always accepted.
public struct ClientStateIndication: ServerFeature {
    public init() {}

    /// Whether the client said its user is not looking.
    enum Inactive: FeatureStateKey {
        static let initialValue = false
    }

    /// The presence updates held while the client is inactive.
    enum Held: FeatureStateKey {
        static let initialValue = HeldPresence()
    }

    public func install(_ hooks: Hooks) {
        hooks.streamFeature { session in
            session.phase == .authenticated ? Element("csi", namespace: NS.csi) : nil
        }
        hooks.onNonza(NS.csi, "active") { _, session in
            session.state[Inactive.self] = false
            Self.release(session)
        }
        hooks.onNonza(NS.csi, "inactive") { _, session in session.state[Inactive.self] = true }
        // XEP-0386: the session begins in the state Bind 2 names.
        hooks.onBindInline(NS.csi, "active") { _, session in
            session.state[Inactive.self] = false
            return nil
        }
        hooks.onBindInline(NS.csi, "inactive") { _, session in
            session.state[Inactive.self] = true
            return nil
        }
        hooks.onDeliver(Self.hold)
    }

    /// Holds a presence update for an inactive client; anything else
    /// first releases what is held.
    @Sendable private static func hold(_ element: Element, for session: ClientSession) -> Handling {
        if session.state[Inactive.self], HeldPresence.canHold(element) {
            if session.state[Held.self].hold(element) { release(session) }
            return .handled
        }
        release(session)
        return .passed
    }

    /// Sends the held presence updates, if any.
    private static func release(_ session: ClientSession) {
        guard !session.state[Held.self].isEmpty else { return }
        for presence in session.state[Held.self].take() { session.send(presence) }
    }
}

/// The presence updates held for an inactive client: the latest from each
/// sender, in the order the senders first changed.
struct HeldPresence {
    /// More senders than this and everything held is sent: a large roster
    /// coming online should not grow the hold without bound.
    static let limit = 200
    /// The most a presence held may weigh (its names, attributes and
    /// text), so that the hold stays within `limit` times this: presence
    /// with a large payload goes out at once.
    static let maxHeldSize = 16 << 10

    private var order: [String] = []
    private var latest: [String: Element] = [:]

    /// Whether nothing is held.
    var isEmpty: Bool { order.isEmpty }

    /// Whether `element` is a presence update that may wait: available or
    /// unavailable, not a subscription request or answer, probe or error.
    static func canHold(_ element: Element) -> Bool {
        guard element.name == "presence", element.namespace == NS.client else { return false }
        let type = element[attribute: "type"]
        var budget = maxHeldSize
        return (type == nil || type == "unavailable") && element.fits(in: &budget)
    }

    /// Keeps `presence`, replacing an earlier one from the same sender.
    /// - Returns: Whether the hold is now over its limit.
    mutating func hold(_ presence: Element) -> Bool {
        let sender = presence[attribute: "from"] ?? ""
        if latest.updateValue(presence, forKey: sender) == nil { order.append(sender) }
        return order.count > Self.limit
    }

    /// Everything held, in order, leaving the hold empty.
    mutating func take() -> [Element] {
        defer {
            order = []
            latest = [:]
        }
        return order.compactMap { latest[$0] }
    }
}

extension Element {
    /// Whether the element's names, attributes and text add up to at most
    /// `budget` bytes; stops as soon as they do not, so the cost is bounded
    /// by the budget rather than the element.
    fileprivate func fits(in budget: inout Int) -> Bool {
        budget -= name.utf8.count + namespace.utf8.count
        for attribute in attributes { budget -= attribute.name.utf8.count + attribute.value.utf8.count }
        guard budget >= 0 else { return false }
        for child in children {
            switch child {
            case .element(let element): guard element.fits(in: &budget) else { return false }
            case .text(let text): budget -= text.utf8.count
            }
            guard budget >= 0 else { return false }
        }
        return true
    }
}
