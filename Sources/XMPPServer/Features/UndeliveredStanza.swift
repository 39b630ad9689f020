import XMPPCore

/// What becomes of a stanza a session accepted but whose client never
/// acknowledged it (XEP-0198 §5: the session ended without resuming).
///
/// | stanza                 | goes to                                                     |
/// |------------------------|-------------------------------------------------------------|
/// | message, chat/normal   | the user's other available resources of highest non-negative priority, else offline storage |
/// | iq get/set             | an error reply (`service-unavailable`) to its sender        |
/// | anything else          | dropped (presence is resent by the server; errors and headlines are not kept) |
enum UndeliveredStanza {
    /// Hands `stanza`, meant for `jid`'s ended session, on.
    static func handOff(_ stanza: Element, of jid: JID, server: ServerContext) {
        if let message = Message(stanza), message.type == .chat || message.type == .normal {
            let candidates = server.sessions.availableSessions(of: jid.bare).compactMap { handle in
                handle.presence.flatMap { $0.priority >= 0 ? (handle, $0.priority) : nil }
            }
            guard let top = candidates.map(\.1).max() else {
                return OfflineMessages.keep(message, for: jid.bare, server: server)
            }
            for (handle, priority) in candidates where priority == top { handle.deliver(stanza) }
        } else if let iq = IQ(stanza), iq.type == .get || iq.type == .set, let sender = iq.from,
            let reply = iq.errorReply(StanzaError(.serviceUnavailable, text: "the recipient went offline"))
        {
            server.sessions.session(sender)?.deliver(reply)
        }
    }
}
