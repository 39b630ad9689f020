import XMPPCore
import XMPPStorage

/// Something that happened on the server that features may react to
/// (Prosody's events, typed): the feature it happens in fires it with
/// `Hooks.fire`, others observe it with `Hooks.on`, and neither calls the
/// other. Every event is fired on the loop of the session it concerns.
///
/// | event               | fired by           | observed by (priority)                              |
/// |---------------------|--------------------|-----------------------------------------------------|
/// | `InitialPresence`   | PresenceBroadcast  | Subscriptions (10: pending requests), OfflineMessages (0) |
/// | `LastUnavailable`   | PresenceBroadcast  | LastActivity                                        |
/// | `MessageDelivered`  | MessageDelivery    | Carbons (received copies)                           |
/// | `RosterItemRemoved` | Roster             | Subscriptions (cancels both ways)                   |
/// | `BlocklistChanged`  | Blocking           | PresenceBroadcast (presence effects)                |
/// | `AccountDeleted`    | account deletion   | Subscriptions (contacts' rosters), HTTPUpload (files), MessageArchive (waiting copies) |
/// | `VCardStored`       | VCardTemp          | AvatarConversion (XEP-0398)                         |
/// | `PresenceSubscriptionApproved` | Subscriptions | PEP (last items to the new subscriber) |
/// | `MessageStoredOffline` | OfflineMessages  | PushNotifications (wakes the user's clients)        |
/// | `SubscriptionRequested` | Subscriptions   | PushNotifications (wakes the user's clients)        |
/// | `GroupChatMention`  | MultiUserChat      | PushNotifications (wakes a suspended occupant)      |
public protocol ServerEvent {}

/// A resource's initial presence has been broadcast (RFC 6121 §4.2) and
/// the contacts' presence sent back; what else a client gets at login
/// follows, in priority order.
public struct InitialPresence: ServerEvent {
    /// The session that became available.
    public let session: ClientSession
    /// The user's roster, as read for the broadcast.
    public let roster: [RosterItem]
}

/// A user's last available resource went away (XEP-0012: the logout).
public struct LastUnavailable: ServerEvent {
    /// The user's bare JID.
    public let user: JID
    /// The `<status/>` of the unavailable presence, if it said one.
    public let status: String?
    /// The server it happened on.
    public let server: ServerContext
}

/// A message went to the resources that were to get it (RFC 6121 §8.5).
public struct MessageDelivered: ServerEvent {
    /// The message as delivered.
    public let message: RoutedMessage
    /// The recipient user (a bare JID).
    public let user: JID
    /// The resources it was delivered to.
    public let resources: [JID]
}

/// A user removed a roster item (RFC 6121 §2.5).
public struct RosterItemRemoved: ServerEvent {
    /// The user's bare JID.
    public let owner: JID
    /// The removed contact.
    public let contact: JID
    /// The subscription state the item had.
    public let state: SubscriptionState
    /// The server it happened on.
    public let server: ServerContext
}

/// A user's blocklist changed (XEP-0191 §3.3, §3.4); the routing cache
/// already holds the new list.
public struct BlocklistChanged: ServerEvent {
    /// The user's bare JID.
    public let user: JID
    /// The list before and after the change.
    public let before: Blocklist
    public let after: Blocklist
    /// The user's roster.
    public let roster: [RosterItem]
    /// The server it happened on.
    public let server: ServerContext
}

/// An account was deleted with everything stored for it; its sessions
/// have been ended.
public struct AccountDeleted: ServerEvent {
    /// The deleted account's bare JID.
    public let account: JID
    /// What the deletion removed that others still refer to.
    public let deleted: DeletedAccount
    /// The server it happened on.
    public let server: ServerContext
}

/// A message was committed to a user's offline storage (XEP-0160), none
/// of whose resources could take it.
public struct MessageStoredOffline: ServerEvent {
    /// The message as stored.
    public let message: Message
    /// The user it waits for (a bare JID).
    public let user: JID
    /// The server it happened on.
    public let server: ServerContext
}

/// A presence subscription request reached a user (RFC 6121 §3.1.3): sent
/// to the available resources, or kept for the next login.
public struct SubscriptionRequested: ServerEvent {
    /// The user asked (a bare JID).
    public let user: JID
    /// Who asks.
    public let contact: JID
    /// The server it happened on.
    public let server: ServerContext
}

/// A groupchat message naming an occupant's nickname went to one of its
/// resources (XEP-0045 §7.4).
public struct GroupChatMention: ServerEvent {
    /// The resource that got it (a full JID).
    public let occupant: JID
    /// The message, from the sender's room address.
    public let message: Element
    /// The server it happened on.
    public let server: ServerContext
}

/// The observers of one event type, in firing order.
final class EventObservers<Event: ServerEvent>: @unchecked Sendable {
    // @unchecked: filled only while the hooks are installed (`Hooks.on`),
    // read-only afterwards.
    var observers: [Prioritized<@Sendable (Event) -> Void>] = []
}

extension Hooks {
    /// Runs `observer` whenever an event of type `Event` is fired, by
    /// priority (higher first), then in install order.
    public func on<Event: ServerEvent>(
        _ event: Event.Type, priority: Int = 0, _ observer: @escaping @Sendable (Event) -> Void
    ) {
        let entry = prioritized(priority, observer)
        let list = eventObservers[ObjectIdentifier(event)].map { unsafeDowncast($0, to: EventObservers<Event>.self) }
            ?? EventObservers<Event>()
        list.observers.append(entry)
        list.observers.sort { $0.runs(before: $1) }
        eventObservers[ObjectIdentifier(event)] = list
    }

    /// Tells the observers of `event`'s type.
    public func fire<Event: ServerEvent>(_ event: Event) {
        guard let list = eventObservers[ObjectIdentifier(Event.self)] else { return }
        // Stored by `on` under this type's identifier: no cast to check.
        for entry in unsafeDowncast(list, to: EventObservers<Event>.self).observers { entry.handler(event) }
    }
}
