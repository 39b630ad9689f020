import Foundation
import XMPPCore

/// One chat message in the client's local archive (`ClientStore`).
///
/// The timestamp is kept in whole milliseconds since 1970, the precision
/// the archive stores, so that a message read back equals the one recorded.
public struct ArchivedMessage: Sendable, Hashable {
    /// The bare JID of the account that sent or received the message.
    public let account: JID
    /// The bare JID of the other side.
    public let contact: JID
    /// The text of `<body/>`.
    public let body: String
    /// When the message was sent: the `<delay/>` stamp (XEP-0203) when the
    /// server held it, otherwise when it arrived or was sent.
    public let timestamp: Date
    /// Whether the account sent the message.
    public let isOutgoing: Bool
    /// The stanza's `id` attribute; with `contact` and the direction it
    /// identifies a message seen twice. An empty id identifies nothing.
    public let id: String
    /// The id the account's server archive gave the message (XEP-0359
    /// `<stanza-id/>`, which MAM (XEP-0313) pages by), if known; unique
    /// within an account.
    public let serverID: String?
    /// Whether the user has seen the message; always `true` for an outgoing one.
    public let isRead: Bool
    /// For a message in a room (whose bare JID is `contact`), the sender's
    /// nickname there; `nil` for a one-to-one message.
    public let nick: String?

    /// Creates a message.
    ///
    /// - Parameters:
    ///   - account: The account; its resource, if any, is dropped.
    ///   - contact: The other side; its resource, if any, is dropped.
    ///   - body: The text.
    ///   - timestamp: When it was sent, rounded to the nearest millisecond.
    ///   - isOutgoing: Whether the account sent it.
    ///   - id: The stanza id.
    ///   - serverID: The XEP-0359 stanza-id given by the account's server.
    ///   - isRead: Whether the user has seen it; ignored (`true`) for an
    ///     outgoing message.
    ///   - nick: The sender's nickname, for a message in the room `contact`.
    public init(
        account: JID, contact: JID, body: String, timestamp: Date, isOutgoing: Bool,
        id: String, serverID: String? = nil, isRead: Bool = false, nick: String? = nil
    ) {
        self.account = account.bare
        self.contact = contact.bare
        self.body = body
        self.timestamp = Self.date(milliseconds: Self.milliseconds(timestamp))
        self.isOutgoing = isOutgoing
        self.id = id
        self.serverID = serverID
        self.isRead = isOutgoing || isRead
        self.nick = nick
    }

    /// `date` as whole milliseconds since 1970-01-01 00:00 UTC, rounded to
    /// the nearest; the form the archive stores and compares.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date `milliseconds` after 1970-01-01 00:00 UTC.
    ///
    /// `milliseconds(date(milliseconds: m)) == m` for any date a message can
    /// carry: the floating-point error is far below half a millisecond.
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
