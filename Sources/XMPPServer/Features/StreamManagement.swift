import XMPPCore

/// XEP-0198: Stream Management. Clients enable it after binding; both sides
/// count stanzas and acknowledge them with `<r/>`/`<a/>`; a client whose
/// connection dropped resumes its session on a new stream within the
/// resumption window (`resume_timeout`) and gets every stanza it had not
/// acknowledged. A session that ends without resuming hands its
/// unacknowledged stanzas on: messages go to the user's other resources or
/// offline storage, requests are answered with an error, so nothing the
/// server accepted is silently lost. So do the stanzas a session held
/// behind its offline backlog (`ClientSession.holdDeliveries()`) when it
/// ends before sending them, stream management or not.
public struct StreamManagement: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.streamFeature { session in
            session.phase == .authenticated ? Element("sm", namespace: NS.sm) : nil
        }
        hooks.onNonza(NS.sm, "enable") { element, session in
            guard session.phase == .bound else { return Self.failed(.unexpectedRequest, session) }
            session.send(Self.enable(element, session))
        }
        // XEP-0386: enabled inside Bind 2; the answer goes in <bound/>.
        hooks.onBindInline(NS.sm, "enable") { element, session in Self.enable(element, session) }
        hooks.onNonza(NS.sm, "resume") { element, session in Self.resume(element, session) }
        hooks.onNonza(NS.sm, "r") { _, session in
            guard let state = session.streamManagement else { return Self.failed(.unexpectedRequest, session) }
            session.send(Element("a", namespace: NS.sm, attributes: ["h": String(state.handledInbound)]))
        }
        hooks.onNonza(NS.sm, "a") { element, session in
            guard session.streamManagement != nil else { return Self.failed(.unexpectedRequest, session) }
            guard let h = element[attribute: "h"].flatMap(UInt32.init) else {
                return session.fail(StreamError(.badFormat, text: "<a/> needs a count 'h' from 0 to 2^32-1"))
            }
            session.receiveAcknowledgement(h)
        }
        hooks.onSessionEnded { session in Self.handOff(session) }
    }

    /// `<enable/>` (XEP-0198 §3): only once, only after binding.
    /// - Returns: `<enabled/>`, or `<failed/>` when it is on already.
    private static func enable(_ element: Element, _ session: ClientSession) -> Element {
        guard session.streamManagement == nil else {
            return ClientSession.resumptionFailed(.unexpectedRequest)
        }
        var state = StreamManagementState<[UInt8]>()
        var enabled = Element("enabled", namespace: NS.sm)
        let window = session.server.config.timeouts.resume
        let wantsResume = ["true", "1"].contains(element[attribute: "resume"] ?? "")
        if wantsResume, window > .zero {
            let requested = element[attribute: "max"].flatMap(Int.init).map { Duration.seconds(max($0, 1)) }
            state.resumeTimeout = min(requested ?? window, window)
            state.resumptionID = Base64.encodeURLSafe(Crypto.randomBytes(count: 18))
            enabled[attribute: "id"] = state.resumptionID
            enabled[attribute: "resume"] = "true"
            enabled[attribute: "max"] = String(state.resumeTimeout.components.seconds)
        }
        session.streamManagement = state
        session.log.debug("stream management on\(state.resumptionID == nil ? "" : ", resumable")")
        return enabled
    }

    /// `<resume/>` (XEP-0198 §5), instead of binding: takes over the
    /// user's session with that id if it is still there.
    private static func resume(_ element: Element, _ session: ClientSession) {
        switch session.takeOver(element) {
        case .failed(let failed):
            session.send(failed)
        case .resumed(let old, let resumed):
            old.send(resumed)
            old.resendUnacknowledged()
            old.server.hooks.sessionResumed(old)
            // What the client sent after <resume/> is the resumed session's.
            old.handleQueuedEvents()
        }
    }

    private static func failed(_ condition: StanzaError.Condition, _ session: ClientSession) {
        session.send(ClientSession.resumptionFailed(condition))
    }

    /// Passes on what the ended session's client never acknowledged, and
    /// what was held for it behind a backlog and never sent (with or
    /// without stream management).
    private static func handOff(_ session: ClientSession) {
        guard let jid = session.handle?.jid ?? session.jid else { return }
        var stanzas = session.takeHeldDeliveries().map(\.bytes)
        if var state = session.streamManagement {
            stanzas = state.takeUnacknowledged() + stanzas
            session.streamManagement = state
        }
        guard !stanzas.isEmpty else { return }
        session.log.info("handing on \(stanzas.count) unacknowledged stanzas")
        for bytes in stanzas {
            // What we wrote in the client stream's scope reads back in it.
            guard let stanza = StoredStanza.parse(String(decoding: bytes, as: UTF8.self)) else {
                session.log.error("an unacknowledged stanza does not parse back; dropped")
                continue
            }
            handOff(stanza, of: jid, server: session.server)
        }
    }

    /// What becomes of a stanza a session accepted but whose client never
    /// acknowledged it (§5: the session ended without resuming).
    ///
    /// | stanza                 | goes to                                                     |
    /// |------------------------|-------------------------------------------------------------|
    /// | message, chat/normal   | the user's other available resources of highest non-negative priority, else the `onMessageOffline` fallback (storage) |
    /// | iq get/set             | an error reply (`service-unavailable`) to its sender        |
    /// | anything else          | dropped (presence is resent by the server; errors and headlines are not kept) |
    private static func handOff(_ stanza: Element, of jid: JID, server: ServerContext) {
        if let message = Message(stanza), message.type == .chat || message.type == .normal {
            let recipients = server.sessions.topPriorityResources(of: jid.bare)
            guard !recipients.isEmpty else {
                return server.hooks.messageOffline(
                    UndeliveredMessage(
                        message: message, original: stanza, user: jid.bare, waitingSender: nil, server: server))
            }
            for handle in recipients { handle.deliver(stanza) }
        } else if let iq = IQ(stanza), iq.type == .get || iq.type == .set, let sender = iq.from,
            let reply = iq.errorReply(StanzaError(.serviceUnavailable, text: "the recipient went offline"))
        {
            server.sessions.session(sender)?.deliver(reply)
        }
    }
}
