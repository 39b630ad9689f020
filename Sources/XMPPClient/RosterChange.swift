import XMPPCore

/// What one item of a roster push does to the roster (RFC 6121 §2.1.6):
/// add or update a contact, or remove one.
public enum RosterChange: Sendable, Hashable {
    /// The contact is added, or replaces its entry.
    case update(RosterContact)
    /// The contact with this bare JID leaves the roster
    /// (`subscription='remove'`, §2.5.2).
    case remove(JID)

    /// Reads the `<item/>` of a roster push.
    ///
    /// - Returns: `.remove` for `subscription='remove'` with a valid bare
    ///   `jid`, `.update` for anything `RosterContact(item:)` accepts, and
    ///   `nil` otherwise.
    public init?(item: Element) {
        if item[attribute: "subscription"] == "remove" {
            guard let jid = RosterContact.jid(ofItem: item) else { return nil }
            self = .remove(jid)
        } else {
            guard let contact = RosterContact(item: item) else { return nil }
            self = .update(contact)
        }
    }

    /// The contact the change is about.
    public var jid: JID {
        switch self {
        case .update(let contact): contact.jid
        case .remove(let jid): jid
        }
    }
}
