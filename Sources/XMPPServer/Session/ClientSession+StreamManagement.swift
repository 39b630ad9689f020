import XMPPCore

/// XEP-0198 on the session: counting, acknowledgements, detaching when the
/// connection drops, and taking over a detached session on `<resume/>`.
extension ClientSession {
    /// Unacknowledged stanzas after which we ask for an acknowledgement at
    /// once rather than after `ackRequestDelay`.
    static let ackRequestBatch = 5
    /// How long a stanza may stay unacknowledged before we ask.
    static let ackRequestDelay = Duration.seconds(1)

    /// Whether losing the connection now should keep the session waiting
    /// for `<resume/>` rather than end it.
    var canWaitForResumption: Bool {
        phase == .bound && !isDetached && streamManagement?.resumptionID != nil
    }

    /// Records a stanza sent under stream management and asks for an
    /// acknowledgement when enough are outstanding or after a short delay.
    /// Past `sm_max_unacked` stanzas or `sm_max_unacked_size` bytes the
    /// stream is closed with `resource-constraint`; what was not
    /// acknowledged is handed on as when any session ends.
    func recordSent(_ stanza: [UInt8]) {
        streamManagement?.recordSent(stanza, byteCount: stanza.count)
        guard let state = streamManagement else { return }
        let limits = server.config.limits
        if state.unacknowledged.count > limits.smMaxUnacked || state.unacknowledgedByteCount > limits.smMaxUnackedSize {
            log.notice("\(state.unacknowledged.count) stanzas (\(state.unacknowledgedByteCount) bytes) not acknowledged")
            server.metrics.limitsHit.increment(.smMaxUnacked)
            return fail(StreamError(.resourceConstraint, text: "too many stanzas are not acknowledged"))
        }
        guard !isDetached, !state.ackRequested else { return }
        if state.unacknowledged.count >= Self.ackRequestBatch {
            requestAcknowledgement()
        } else if streamManagementTimer == nil {
            streamManagementTimer = server.loop.scheduleTimer(after: Self.ackRequestDelay) { [self] in
                guard self.phase != .closed, !self.isDetached else { return }
                self.streamManagementTimer = nil
                if self.streamManagement?.unacknowledged.isEmpty == false, self.streamManagement?.ackRequested == false {
                    self.requestAcknowledgement()
                }
            }
        }
    }

    /// Sends `<r/>`, and gives the client `sm_ack_timeout` to answer it:
    /// a client that does not is treated as gone (its session waits to be
    /// resumed, when it can be).
    private func requestAcknowledgement() {
        streamManagement?.ackRequested = true
        streamManagementTimer?.cancel()
        let timeout = server.config.timeouts.acknowledgement
        streamManagementTimer = server.loop.scheduleTimer(after: timeout) { [self] in
            guard self.phase != .closed, !self.isDetached, self.streamManagement?.ackRequested == true
            else { return }
            self.streamManagementTimer = nil
            self.log.notice("no acknowledgement within \(timeout)")
            if self.canWaitForResumption {
                self.detach()
            } else {
                self.fail(StreamError(.connectionTimeout, text: "no acknowledgement within \(timeout)"))
            }
        }
        send(Element("r", namespace: NS.sm))
    }

    /// Applies the client's `<a h='…'/>`.
    func receiveAcknowledgement(_ h: UInt32) {
        guard streamManagement != nil else { return }
        do {
            try streamManagement!.acknowledge(h)
            if streamManagement!.ackRequested {
                streamManagement!.ackRequested = false
                streamManagementTimer?.cancel()
                streamManagementTimer = nil
            }
        } catch {
            var condition = Element("handled-count-too-high", namespace: NS.sm)
            condition[attribute: "h"] = String(error.claimed)
            condition[attribute: "send-count"] = String(error.sent)
            fail(
                StreamError(
                    .undefinedCondition, text: "acknowledged \(error.claimed) stanzas of \(error.sent) sent",
                    applicationCondition: condition))
        }
    }

    /// Keeps the session after its connection dropped, queueing what
    /// arrives for it, until it is resumed or the resumption window closes
    /// (or the longer time a feature keeps it: `Hooks.keepDetached`).
    func detach() {
        guard let window = streamManagement?.resumeTimeout else { return finish() }
        let timeout = max(window, server.hooks.detachedLifetime(of: self) ?? window)
        log.info("waiting \(timeout) for the client to resume")
        isDetached = true
        idleTimer?.cancel()
        streamManagementTimer?.cancel()
        transport?.session = nil
        transport?.close()
        transport = nil
        tls = nil
        streamManagementTimer = server.loop.scheduleTimer(after: timeout) { [self] in
            guard self.phase != .closed else { return }
            self.log.info("not resumed in time")
            self.finish()
        }
        server.hooks.sessionDetached(self)
    }

    /// Continues this session on `new`'s connection, where its client
    /// asked to resume it (XEP-0198 §5), as Prosody's mod_smacks does: the
    /// connection, TLS and parser move in, with what `new` parsed and has
    /// not handled yet; the session keeps everything else (its full JID,
    /// registry entry, presence, feature state and queue). `new`, which
    /// only negotiated a stream, ends without a trace. A connection this
    /// session still had (the server did not notice it drop) is closed.
    /// - Parameter h: The client's count of our stanzas it handled.
    func resume(on new: ClientSession, acknowledging h: UInt32) throws(StreamManagementCountTooHigh) {
        try streamManagement?.acknowledge(h)
        streamManagement?.ackRequested = false
        streamManagementTimer?.cancel()
        streamManagementTimer = nil
        log.info("resumed by another connection")
        if let previous = transport {
            previous.session = nil
            closeTLS()
            previous.close()
        }
        transport = new.transport
        transport?.session = self
        tls = new.tls
        parser = new.parser
        log = new.log
        peerHost = new.peerHost
        streamID = new.streamID
        streamLanguage = new.streamLanguage
        headerSent = new.headerSent
        lastReceived = new.lastReceived
        lastSent = new.lastSent
        queuedEvents = Array(new.queuedEvents[new.queueHead...])
        queueHead = 0
        heldInput = new.heldInput
        isDetached = false
        new.transport = nil
        new.tls = nil
        new.finish()
        restartIdleCheck()
    }

    /// What a `<resume/>` came to.
    enum Resumption {
        /// `session`, the one resumed, now runs on the connection; send it
        /// `resumed` (XEP-0198 `<resumed/>`).
        case resumed(ClientSession, resumed: Element)
        /// Nothing was resumed; send `failed` (XEP-0198 `<failed/>`).
        case failed(Element)
    }

    /// Takes over this user's detached session named by `<resume/>`
    /// (XEP-0198 §5) for this authenticated connection, found by its id:
    /// the same step whether `<resume/>` came alone or inside SASL2.
    func takeOver(_ element: Element) -> Resumption {
        guard phase == .authenticated, let username else {
            return .failed(Self.resumptionFailed(.unexpectedRequest))
        }
        guard let previous = element[attribute: "previd"], let h = element[attribute: "h"].flatMap(UInt32.init) else {
            return .failed(Self.resumptionFailed(.badRequest))
        }
        let user = try? JID(localpart: username, domainpart: server.domain)
        let old = user.map { server.sessions.sessions(of: $0) }?.lazy
            .compactMap(\.sessionOnThisLoop)
            .first { $0.streamManagement?.resumptionID == previous && $0 !== self }
        guard let old else {
            log.info("cannot resume \(previous): no such session (ended or timed out)")
            return .failed(Self.resumptionFailed(.itemNotFound))
        }
        // What waits unacknowledged was written for the old transport's
        // framing (in the stream's namespace scope, or declaring its own).
        guard old.framing == framing else {
            log.info("cannot resume \(previous) over another transport (TCP and WebSocket)")
            return .failed(
                Self.resumptionFailed(.unexpectedRequest, text: "resume over the transport the stream began on"))
        }
        do {
            try old.resume(on: self, acknowledging: h)
        } catch {
            return .failed(
                Self.resumptionFailed(.undefinedCondition, text: "acknowledged \(error.claimed) of \(error.sent)"))
        }
        let handled = old.streamManagement?.handledInbound ?? 0
        old.log.info("resumed \(old.jid?.description ?? "")")
        return .resumed(old, resumed: Element("resumed", namespace: NS.sm, attributes: ["previd": previous, "h": String(handled)]))
    }

    /// XEP-0198's `<failed/>` with a stanza error condition.
    static func resumptionFailed(_ condition: StanzaError.Condition, text: String? = nil) -> Element {
        var failed = Element("failed", namespace: NS.sm)
        failed.append(Element(condition.rawValue, namespace: NS.stanzas))
        if let text { failed.append(Element("text", namespace: NS.stanzas, children: [.text(text)])) }
        return failed
    }

    /// Sends again every stanza the client has not acknowledged, as they
    /// were, without counting them twice.
    func resendUnacknowledged() {
        guard let stanzas = streamManagement?.unacknowledged else { return }
        for stanza in stanzas { send(stanza) }
        if !stanzas.isEmpty { requestAcknowledgement() }
    }
}
