import XMPPCore

/// One line of a conversation list: who, the latest message, and how many
/// messages the user has not read (`ClientStore.recentConversations`).
public struct ConversationSummary: Sendable, Hashable {
    /// The other side's bare JID.
    public let contact: JID
    /// The newest message of the conversation, in either direction.
    public let lastMessage: ArchivedMessage
    /// The number of incoming messages not marked read.
    public let unreadCount: Int

    /// Creates a summary.
    public init(contact: JID, lastMessage: ArchivedMessage, unreadCount: Int) {
        self.contact = contact
        self.lastMessage = lastMessage
        self.unreadCount = unreadCount
    }
}
