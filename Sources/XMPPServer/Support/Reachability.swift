import XMPPCore
import XMPPStorage

/// For storage jobs that answer on a user's behalf (offline messages,
/// IQs to the bare JID): what the stored account and blocklist say about
/// a sender. Routing itself decides by the cached lists (`Blocking`).
extension Stores {
    /// Whether `username` exists and does not block `sender`. The two look
    /// the same from outside (RFC 6121 §8.5.1, XEP-0191 §3.3:
    /// `service-unavailable`).
    func reaches(_ username: String, from sender: JID) throws -> Bool {
        guard try accounts.accountExists(username) else { return false }
        return try sender.localpart == username || !blocks(sender, by: username)
    }

    /// Whether `username` blocks `sender`, by the stored list (XEP-0191).
    func blocks(_ sender: JID, by username: String) throws -> Bool {
        try blocklists.blocks(username, anyOf: Blocklist.forms(of: sender))
    }
}
