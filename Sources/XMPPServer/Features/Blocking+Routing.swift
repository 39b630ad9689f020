import XMPPCore

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
    /// The pre-route hook: applies the table to a stanza to a local user,
    /// by the cached lists, and takes the stanza when it must not be
    /// routed, after answering it as the table says.
    ///
    /// A recipient with no session has no cached list: its messages are
    /// checked against the stored list on their way to offline storage,
    /// the server's answers on its behalf in their storage jobs
    /// (`Stores.reaches`). A subscription stanza to a user who blocks its
    /// sender is left to the recipient's side, which drops it there
    /// (`Subscriptions`).
    @Sendable static func intercept(_ stanza: RoutedStanza) -> Handling {
        guard let recipient = stanza.recipient, recipient.localpart != nil else { return .passed }
        let element = stanza.element
        let session = stanza.session
        switch session.server.blocklists.verdict(from: stanza.sender, to: recipient) {
        case .allowed:
            return .passed
        case .senderBlocksRecipient:
            let isResult = element.name == "iq" && element[attribute: "type"] == "result"
            if !isResult, let reply = Stanza(element)?.errorReply(blockedError) { session.send(reply) }
            return .handled
        case .recipientBlocksSender:
            if isSubscription(element) { return .passed }
            if answersInbound(element), let reply = Stanza(element)?.errorReply(StanzaError(.serviceUnavailable)) {
                session.send(reply)
            }
            return .handled
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

    private static func isSubscription(_ stanza: Element) -> Bool {
        guard stanza.name == "presence", let type = stanza[attribute: "type"] else { return false }
        return ["subscribe", "subscribed", "unsubscribe", "unsubscribed"].contains(type)
    }
}
