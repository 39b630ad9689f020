import XMPPCore
import XMPPStorage

/// Whether a resource asked for the roster, and so gets roster pushes and
/// subscription answers (RFC 6121 §2.1.6, §3.1.6).
enum RosterInterest: FeatureStateKey {
    static let initialValue = false
}

extension RosterItem {
    /// The `<item/>` a client sees for this item (RFC 6121 §2.1.2).
    var element: Element {
        var element = Element(
            "item", namespace: NS.roster, attributes: ["jid": contact, "subscription": state.subscription.rawValue])
        if let name { element[attribute: "name"] = name }
        if state.pendingOut { element[attribute: "ask"] = "subscribe" }
        if state.preApproved { element[attribute: "approved"] = "true" }
        for group in groups {
            element.append(Element("group", namespace: NS.roster, children: [.text(group)]))
        }
        return element
    }
}

/// Roster pushes: the shared service through which every change to a
/// roster reaches its owner's resources, whichever feature made it (the
/// roster itself, subscriptions, an account deletion).
extension ServerContext {
    /// Sends a roster push of `item` at `version` to every interested
    /// resource of `owner` (RFC 6121 §2.1.6), each addressed to its full JID.
    func pushRosterItem(_ item: Element, version: Int, to owner: JID) {
        let query = Element("query", namespace: NS.roster, attributes: ["ver": String(version)], children: [.element(item)])
        push(query, to: owner) { $0.state[RosterInterest.self] }
    }
}
