import XMPPCore
import XMPPStorage

/// XEP-0191 §3.3 in routing: what happens to a stanza between a user and
/// someone they block, or who blocks them.
///
/// | stanza                      | sender blocks recipient        | recipient blocks sender   |
/// |-----------------------------|--------------------------------|---------------------------|
/// | message chat, normal        | `not-acceptable` + `<blocked/>` | `service-unavailable`     |
/// | message headline, groupchat | `not-acceptable` + `<blocked/>` | dropped                   |
/// | iq get, set                 | `not-acceptable` + `<blocked/>` | `service-unavailable`     |
/// | presence from the client    | `not-acceptable` + `<blocked/>` | dropped                   |
/// | presence from the server (broadcast, probe answers) | dropped | dropped                   |
/// | errors, iq results          | dropped                        | dropped                   |
///
/// Headlines and groupchat to a blocker are dropped, not refused, as
/// Prosody does: for them an offline user answers nothing either. A
/// subscription request to a blocker is dropped at the blocker's side
/// only, so the requester's roster shows it pending as for anyone who does
/// not answer.
extension Blocking {
    /// Applies the table to a stanza `session` sends to a local
    /// `recipient`, by the cached lists: true when it must not be routed,
    /// after answering it as the table says.
    ///
    /// A recipient with no session has no cached list: its messages are
    /// checked against the stored list on their way to offline storage,
    /// the server's answers on its behalf in their storage jobs.
    /// - Parameter checkingRecipient: False to apply only the sender's
    ///   list (subscription stanzas, which the recipient's side checks).
    static func refuses(
        _ stanza: Element, to recipient: JID, from session: ClientSession, checkingRecipient: Bool = true
    ) -> Bool {
        guard let sender = session.jid else { return false }
        switch session.server.blocklists.verdict(from: sender, to: recipient) {
        case .allowed:
            return false
        case .senderBlocksRecipient:
            let isResult = stanza.name == "iq" && stanza[attribute: "type"] == "result"
            if !isResult, let reply = Stanza(stanza)?.errorReply(blockedError) { session.send(reply) }
            return true
        case .recipientBlocksSender:
            guard checkingRecipient else { return false }
            if answersInbound(stanza), let reply = Stanza(stanza)?.errorReply(StanzaError(.serviceUnavailable)) {
                session.send(reply)
            }
            return true
        }
    }

    /// §3.3: the error for a stanza to a JID the sender blocks.
    static let blockedError = StanzaError(
        .notAcceptable, type: .cancel, text: "You have blocked this JID",
        applicationCondition: Element("blocked", namespace: NS.blockingErrors))

    /// Whether a stanza to someone who blocks its sender gets an error.
    private static func answersInbound(_ stanza: Element) -> Bool {
        switch (stanza.name, stanza[attribute: "type"]) {
        case ("iq", "get"), ("iq", "set"): true
        case ("message", nil), ("message", "chat"), ("message", "normal"): true
        default: false
        }
    }

    /// For storage jobs that answer on a user's behalf (offline messages,
    /// IQs to the bare JID): whether `username` exists and does not block
    /// `sender`, by the stored list. The two look the same from outside
    /// (RFC 6121 §8.5.1, XEP-0191 §3.3: `service-unavailable`).
    static func reaches(_ username: String, from sender: JID, in stores: Stores) throws -> Bool {
        guard try stores.accounts.accountExists(username) else { return false }
        return try sender.localpart == username || !isBlocked(sender, by: username, in: stores)
    }

    /// Whether `username` blocks `sender`, by the stored list.
    static func isBlocked(_ sender: JID, by username: String, in stores: Stores) throws -> Bool {
        try stores.blocklists.blocks(username, anyOf: Blocklist.forms(of: sender))
    }
}
