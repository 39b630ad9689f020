import Foundation
import XMPPCore

/// Where a client's connection stands.
public enum ConnectionState: Sendable, Hashable {
    /// Not connected; with the error that ended the last connection, if
    /// one did.
    case disconnected(XMPPClientError?)
    /// Connecting and logging in.
    case connecting
    /// Logged in, bound to this full JID, roster synchronized.
    case connected(JID)
    /// The connection dropped; attempt `attempt` starts after `delay`.
    case reconnecting(attempt: Int, delay: Duration, lastError: XMPPClientError?)
}

/// How present someone is (RFC 6121 §4.7.2.1), unavailable included.
public enum Availability: String, Sendable, Hashable, CaseIterable {
    case available, chat, away, xa, dnd, unavailable
}

/// A contact's presence on one resource.
public struct ContactPresence: Sendable, Hashable {
    /// The full JID of the contact's resource (or the bare JID, for a
    /// presence without a resource).
    public var jid: JID
    /// Available (with a sub-state) or unavailable.
    public var availability: Availability
    /// The status text, if any.
    public var status: String?
    /// The resource's priority.
    public var priority: Int8
    /// The SHA-1 of the contact's avatar (XEP-0153): "" for none, nil when
    /// the presence did not say.
    public var avatarHash: String?

    /// A presence as described by its parts.
    public init(
        jid: JID, availability: Availability, status: String? = nil, priority: Int8 = 0, avatarHash: String? = nil
    ) {
        self.jid = jid
        self.availability = availability
        self.status = status
        self.priority = priority
        self.avatarHash = avatarHash
    }
}

/// A message that arrived.
public struct ReceivedMessage: Sendable, Hashable {
    /// The stanza id (one the client made up when the sender gave none).
    public var id: String
    /// The sender's full JID.
    public var from: JID
    /// The addressee as the sender wrote it (for a message sent by another
    /// of our resources, the contact).
    public var to: JID?
    /// `chat`, `normal`, `groupchat` or `headline`.
    public var type: Message.MessageType
    /// The text.
    public var body: String
    /// When it was sent: the XEP-0203 delay stamp for a message the server
    /// kept while the client was offline, else the arrival time. A stamp
    /// from the sender is not trusted (it could backdate the message); only
    /// one from our server, or from our own account on a copy of what
    /// another of our resources sent, is used.
    public var timestamp: Date
    /// Whether the timestamp is a trusted delay stamp: the server held the
    /// message for a while (offline storage).
    public var isDelayed: Bool
    /// Whether another of our own resources sent it (a carbon copy,
    /// XEP-0280): `from` is that resource, `to` the contact.
    public var sentByUs: Bool
    /// The URL of an attached file (XEP-0066 out-of-band data), as HTTP
    /// upload clients send images and voice.
    public var attachmentURL: String?

    /// A message as described by its parts.
    public init(
        id: String, from: JID, to: JID? = nil, type: Message.MessageType, body: String, timestamp: Date,
        isDelayed: Bool, sentByUs: Bool = false, attachmentURL: String? = nil
    ) {
        self.id = id
        self.from = from
        self.to = to
        self.type = type
        self.body = body
        self.timestamp = timestamp
        self.isDelayed = isDelayed
        self.sentByUs = sentByUs
        self.attachmentURL = attachmentURL
    }
}

/// A change to the roster.
public enum RosterEvent: Sendable, Hashable {
    /// The whole roster, after it was fetched.
    case loaded([RosterContact])
    /// One contact was added or changed.
    case updated(RosterContact)
    /// One contact was removed.
    case removed(JID)
}

/// Something that happened on a client's connection, delivered in order to
/// every sequence from ``XMPPClient/events()``.
public enum ClientEvent: Sendable, Hashable {
    /// The connection state changed.
    case connectionState(ConnectionState)
    /// A message with a body arrived.
    case message(ReceivedMessage)
    /// A message we sent (this id) bounced with this error.
    case messageFailed(id: String?, from: JID, error: XMPPClientError)
    /// A contact's resource changed presence.
    case presence(ContactPresence)
    /// The roster changed.
    case roster(RosterEvent)
    /// Someone asks to see our presence; answer with
    /// ``XMPPClient/acceptSubscription(from:subscribeBack:)`` or
    /// ``XMPPClient/rejectSubscription(from:)``.
    case subscriptionRequest(from: JID, status: String?)
    /// A contact approved (`true`) or denied or revoked (`false`) our
    /// subscription to their presence.
    case subscriptionAnswer(from: JID, approved: Bool)
    /// Something happened in a room, or someone invites us into one
    /// (XEP-0045).
    case room(RoomEvent)
}
