import XMPPCore

/// One contact in the user's roster, as the server shows it (RFC 6121 §2.1.2).
///
/// The client's roster model: what a roster result or push carries, what
/// `ClientStore` caches between sessions, and what a roster set sends back
/// (through `element`).
public struct RosterContact: Sendable, Hashable {
    /// The contact's bare JID, which identifies the item (§2.1.2.3).
    public let jid: JID
    /// The user's name for the contact, if any (§2.1.2.4).
    public let name: String?
    /// The groups the user put the contact in, in order, each once (§2.1.2.6).
    public let groups: [String]
    /// Who sees whose presence (§2.1.2.5).
    public let subscription: SubscriptionState.Subscription
    /// The user asked to see the contact's presence and the contact has not
    /// answered: the item carries `ask='subscribe'` (§2.1.2.2).
    public let isPendingOut: Bool

    /// Creates a contact.
    ///
    /// - Parameters:
    ///   - jid: The contact; its resource, if any, is dropped.
    ///   - name: The user's name for the contact.
    ///   - groups: The groups, in order; a group repeated later is dropped,
    ///     comparing names by their UTF-8 bytes as the server does.
    ///   - subscription: The subscription; `.none` by default.
    ///   - isPendingOut: Whether a subscription request is unanswered.
    public init(
        jid: JID, name: String? = nil, groups: [String] = [],
        subscription: SubscriptionState.Subscription = .none, isPendingOut: Bool = false
    ) {
        var seen: Set<[UInt8]> = []
        self.jid = jid.bare
        self.name = name
        self.groups = groups.filter { seen.insert(Array($0.utf8)).inserted }
        self.subscription = subscription
        self.isPendingOut = isPendingOut
    }

    /// Reads a `<item/>` of a `jabber:iq:roster` result or push.
    ///
    /// Lenient where RFC 6121 leaves room: a missing `subscription` means
    /// `none` (§2.1.2.5), an empty `name` means no name, and empty or
    /// repeated `<group/>`s, which a server refuses in a roster set
    /// (§2.3.3), are skipped.
    ///
    /// - Returns: `nil` when the element is not a roster item, when its
    ///   `jid` is missing, invalid or has a resource (taking the bare JID
    ///   could merge two items), or when its `subscription` is not one of
    ///   `none`, `to`, `from`, `both` (`remove` included: see `RosterChange`).
    public init?(item: Element) {
        guard let jid = Self.jid(ofItem: item),
            let subscription = SubscriptionState.Subscription(
                rawValue: item[attribute: "subscription"] ?? "none")
        else { return nil }
        let groups = item.elements.filter { $0.name == "group" && $0.namespace == NS.roster }
        self.init(
            jid: jid, name: item[attribute: "name"].flatMap { $0.isEmpty ? nil : $0 },
            groups: groups.map(\.text).filter { !$0.isEmpty }, subscription: subscription,
            isPendingOut: item[attribute: "ask"] == "subscribe")
    }

    /// The bare JID a roster `<item/>` is about, or `nil` when the element
    /// is not a roster item or its `jid` is missing, invalid or full.
    static func jid(ofItem item: Element) -> JID? {
        guard item.name == "item", item.namespace == NS.roster,
            let address = item[attribute: "jid"], let jid = try? JID(address), jid.isBare
        else { return nil }
        return jid
    }

    /// The `<item/>` to send in a roster set that adds or updates this
    /// contact (RFC 6121 §2.3.1): `jid`, `name` and the groups only. A
    /// client must not send `ask` (§2.1.2.2), and a server ignores any
    /// `subscription` but `remove` in a set (§2.1.2.5).
    public var element: Element {
        var element = Element("item", namespace: NS.roster, attributes: ["jid": jid.description])
        element[attribute: "name"] = name
        for group in groups {
            element.append(Element("group", namespace: NS.roster, children: [.text(group)]))
        }
        return element
    }
}
