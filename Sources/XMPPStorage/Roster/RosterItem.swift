import XMPPCore

/// What the server keeps about one contact of a user: the roster item the
/// client sees (RFC 6121 §2.1.2) and the subscription state behind it
/// (RFC 6121 §3, Appendix A.1).
///
/// An entry can exist without a visible roster item: when someone the user
/// never added asks to subscribe, the server must remember the "None +
/// Pending In" state (RFC 6121 §3.1.3) but shows no item for it
/// (`inRoster == false`).
public struct RosterItem: Sendable, Hashable {
    /// The contact's bare JID, already prepared (normalized) by the caller;
    /// the stores compare it byte for byte.
    public var contact: String
    /// The user's name for the contact (the item's `name` attribute), if any.
    public var name: String?
    /// The groups the user put the contact in, in the order given, each
    /// once: a group repeated later in the list is dropped, comparing the
    /// names by their UTF-8 bytes, as the stores compare everything.
    public var groups: [String] {
        didSet { groups = Self.removingDuplicates(groups) }
    }
    /// The subscription and the pending requests.
    public var state: SubscriptionState
    /// Whether the user has the contact in the roster; `false` for an entry
    /// that only remembers an unanswered inbound subscription request.
    public var inRoster: Bool
    /// The inbound `<presence type='subscribe'/>` not yet answered,
    /// serialized, kept so that it can be redelivered at each login with its
    /// status text (RFC 6121 §3.1.3); `nil` when there is none.
    public var pendingInRequest: String?

    /// Creates an entry; duplicate groups are dropped.
    ///
    /// - Parameters:
    ///   - contact: The contact's prepared bare JID.
    ///   - name: The user's name for the contact.
    ///   - groups: The groups, in order.
    ///   - state: The subscription state; "None" by default.
    ///   - inRoster: Whether the user sees the item; `true` by default.
    ///   - pendingInRequest: The serialized inbound subscription request to redeliver.
    public init(
        contact: String, name: String? = nil, groups: [String] = [],
        state: SubscriptionState = SubscriptionState(), inRoster: Bool = true,
        pendingInRequest: String? = nil
    ) {
        self.contact = contact
        self.name = name
        self.groups = Self.removingDuplicates(groups)
        self.state = state
        self.inRoster = inRoster
        self.pendingInRequest = pendingInRequest
    }

    private static func removingDuplicates(_ groups: [String]) -> [String] {
        var seen: Set<[UInt8]> = []
        return groups.filter { seen.insert(Array($0.utf8)).inserted }
    }
}
