import XMPPCore
import XMPPNet

/// One external component's stream (XEP-0114, `jabber:component:accept`):
/// the component names its domain in the header, proves it knows the
/// secret with `<handshake/>`, then exchanges stanzas for that domain.
///
/// The limits are the client streams': `max_stanza_size_unauthenticated`
/// until the handshake, `max_stanza_size` after it, `handshake_timeout`,
/// `idle_timeout` (with a space after `keepalive_interval` without output)
/// and `max_queued_output`. Confined to its loop, like `ClientSession`.
public final class ComponentSession {
    /// Where the stream is in XEP-0114 §3's sequence.
    enum Phase: Equatable {
        /// Waiting for the component's header, then for its handshake.
        case handshaking
        /// The handshake succeeded; stanzas flow.
        case connected
        /// The stream is closing or closed; input is ignored.
        case closed
    }

    let server: ServerContext
    /// The connection; weak because the connection owns the session.
    weak var transport: (any SessionTransport)?
    var log: Logger
    private let parser: XMLStreamParser
    private(set) var phase = Phase.handshaking
    /// The component's configured domain, once its header named one.
    private(set) var domain: String?
    /// The stream id we sent, which the handshake hashes.
    private var streamID = ""
    private var headerSent = false
    private var lastReceived: ContinuousClock.Instant
    private var lastSent: ContinuousClock.Instant
    private var handshakeTimer: (any ScheduledWork)?
    private var idleTimer: (any ScheduledWork)?
    private var outputOverflowed = false
    /// How many keepalive pings were sent, for their ids.
    private var pingCount = 0

    /// Creates the session for a connection the component listener accepted.
    public init(server: ServerContext, transport: any SessionTransport, id: Int) {
        self.server = server
        self.transport = transport
        self.log = server.log.labelled("component#\(id) \(transport.peerAddress)")
        self.parser = XMLStreamParser(limits: server.unauthenticatedLimits)
        self.lastReceived = server.loop.now
        self.lastSent = server.loop.now
        log.info("connected")
        handshakeTimer = server.loop.scheduleTimer(after: server.config.timeouts.handshake) { [self] in
            guard phase == .handshaking else { return }
            fail(StreamError(.connectionTimeout, text: "the handshake took too long"))
        }
        scheduleIdleCheck(after: min(server.config.timeouts.idle, server.config.timeouts.keepaliveInterval))
    }

    // MARK: - Input

    /// Handles bytes from the transport.
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        server.loop.assertInLoop()
        guard phase != .closed else { return }
        lastReceived = server.loop.now
        for event in parser.feed(bytes) {
            guard phase != .closed else { return }
            handle(event)
        }
    }

    /// The transport reports that the connection is gone.
    public func transportClosed(failure: String? = nil) {
        server.loop.assertInLoop()
        guard phase != .closed else { return }
        log.info("disconnected\(failure.map { ": \($0)" } ?? "")")
        finish()
    }

    private func handle(_ event: XMLStreamEvent) {
        switch event {
        case .streamOpen(let header):
            receiveHeader(header)
        case .element(let element):
            receiveElement(element)
        case .streamClose:
            log.info("the component closed the stream")
            send(XMLSerializer.streamClosing(Self.headerShape))
            close()
        case .error(let error):
            log.notice("bad XML: \(error)")
            fail(error.streamError)
        }
    }

    /// Checks the header and answers with ours and a fresh stream id
    /// (XEP-0114 §3.1): `to` must be a configured component's domain.
    private func receiveHeader(_ header: StreamHeader) {
        guard domain == nil else { return fail(StreamError(.invalidXML, text: "a second stream header")) }
        guard header.name == "stream", header.namespace == NS.streams,
            header.defaultNamespace == NS.componentAccept
        else {
            return fail(StreamError(.invalidNamespace, text: "expected a stream in \(NS.componentAccept)"))
        }
        guard let to = header[attribute: "to"] else {
            return fail(StreamError(.improperAddressing, text: "the stream header needs a 'to' attribute"))
        }
        guard let jid = try? JID(to), jid.isDomainOnly, server.config.componentDomains.contains(jid.domainpart) else {
            return fail(StreamError(.hostUnknown, text: "no component is configured for \(to)"))
        }
        domain = jid.domainpart
        sendHeader()
    }

    private func receiveElement(_ element: Element) {
        switch phase {
        case .handshaking:
            guard domain != nil, element.namespace == NS.componentAccept, element.name == "handshake" else {
                return fail(StreamError(.notAuthorized, text: "handshake first"))
            }
            receiveHandshake(element.text)
        case .connected:
            let stanza = element.movingNamespace(NS.componentAccept, to: NS.client)
            guard Stanza(stanza) != nil else {
                return fail(StreamError(.unsupportedStanzaType, text: "<\(element.name)/> is not a stanza"))
            }
            ComponentRouting.route(stanza, from: self)
        case .closed:
            break
        }
    }

    /// XEP-0114 §3.2: the handshake is the lowercase hex SHA-1 of the
    /// stream id followed by the secret, compared in constant time. A
    /// component already connected keeps its stream; the newcomer gets
    /// `conflict` (as Prosody does by default).
    private func receiveHandshake(_ proof: String) {
        guard let domain, let secret = server.config.components.services.first(where: { $0.domain == domain })?.secret
        else { return fail(StreamError(.notAuthorized)) }
        let expected = Hex.encode(HashFunction.sha1.hash(Array((streamID + secret).utf8)))
        guard Crypto.constantTimeEquals(Array(proof.lowercased().utf8), Array(expected.utf8)) else {
            log.notice("handshake failed for \(domain)")
            return fail(StreamError(.notAuthorized, text: "the handshake does not match the secret"))
        }
        guard server.components.connect(domain, ComponentHandle(self)) else {
            log.notice("handshake ok for \(domain), but it is already connected")
            return fail(StreamError(.conflict, text: "\(domain) is already connected"))
        }
        phase = .connected
        handshakeTimer?.cancel()
        parser.limits = server.authenticatedLimits
        log = log.labelled(domain)
        log.info("handshake ok: \(domain) is connected")
        send(Element("handshake", namespace: NS.componentAccept))
    }

    // MARK: - Output

    /// Sends a stanza to the component, in the component namespace.
    public func deliver(_ element: Element) {
        server.loop.assertInLoop()
        send(element.movingNamespace(NS.client, to: NS.componentAccept))
    }

    /// Sends an element inside the component stream's namespace scope.
    func send(_ element: Element) {
        do {
            send(try XMLSerializer.bytes(element, in: Self.scope))
        } catch {
            log.error("cannot serialize <\(element.name)>: \(error)")
        }
    }

    /// Hands bytes to the connection; past `max_queued_output` waiting for
    /// a component that does not read, the stream is closed.
    private func send(_ bytes: [UInt8]) {
        guard phase != .closed, let transport else { return }
        lastSent = server.loop.now
        transport.write(bytes)
        let limit = server.config.limits.maxQueuedOutput
        if transport.queuedByteCount > limit, !outputOverflowed {
            outputOverflowed = true
            log.notice("more than \(limit) bytes wait for this component to read them")
            fail(StreamError(.resourceConstraint, text: "the component does not read what it is sent"))
        }
    }

    /// Our header: `from` the component's domain (or ours, before we know
    /// it) and the stream id (XEP-0114 §3.1).
    private func sendHeader() {
        streamID = Base64.encode(Crypto.randomBytes(count: 12))
        var header = Self.headerShape
        header.attributes = [Attribute("from", domain ?? server.domain), Attribute("id", streamID)]
        do {
            send(try XMLSerializer.streamOpening(header))
            headerSent = true
        } catch {
            log.error("cannot write our stream header: \(error)")
            close()
        }
    }

    // MARK: - Closing

    /// Sends a stream error and closes (RFC 6120 §4.9.1.1), after our
    /// header if it was not sent yet.
    func fail(_ error: StreamError) {
        guard phase != .closed else { return }
        log.notice("stream error \(error.condition.rawValue)\(error.text.map { ": \($0)" } ?? "")")
        if !headerSent { sendHeader() }
        send(error.element)
        send(XMLSerializer.streamClosing(Self.headerShape))
        close()
    }

    /// Closes the connection after what is queued, once.
    private func close() {
        guard phase != .closed else { return }
        finish()
        transport?.close()
    }

    /// Releases everything the session holds; runs once.
    private func finish() {
        if phase == .connected, let domain {
            server.components.disconnect(domain, ifSession: self)
            log.info("\(domain) is disconnected")
        }
        phase = .closed
        handshakeTimer?.cancel()
        idleTimer?.cancel()
    }

    /// Closes a stream silent for `idle_timeout`; after `keepalive_interval`
    /// without output, sends a space, or a ping (XEP-0199) when the
    /// component was silent that long too. Components send little by
    /// themselves (slixmpp a space every 5 minutes, the default
    /// `idle_timeout`); every library answers an IQ, so one that is alive
    /// stays connected. One timer, re-armed for what remains.
    private func scheduleIdleCheck(after delay: Duration) {
        idleTimer = server.loop.scheduleTimer(after: delay) { [self] in
            guard phase != .closed else { return }
            let now = server.loop.now
            let timeouts = server.config.timeouts
            let silentFor = lastReceived.duration(to: now)
            if silentFor >= timeouts.idle { return fail(StreamError(.connectionTimeout, text: "idle for too long")) }
            if phase == .connected, lastSent.duration(to: now) >= timeouts.keepaliveInterval {
                if silentFor >= timeouts.keepaliveInterval { sendPing() } else { send([0x20]) }
            }
            let untilKeepalive = timeouts.keepaliveInterval - lastSent.duration(to: now)
            scheduleIdleCheck(after: max(.milliseconds(10), min(timeouts.idle - silentFor, untilKeepalive)))
        }
    }

    /// Asks the component for a sign of life; its answer (a result or an
    /// error, to the domain) is dropped by the routing.
    private func sendPing() {
        guard let domain else { return }
        pingCount += 1
        var ping = Element(
            "iq", namespace: NS.componentAccept,
            attributes: ["type": "get", "id": "keepalive-\(pingCount)", "from": server.domain, "to": domain])
        ping.append(Element("ping", namespace: NS.ping))
        send(ping)
    }

    // MARK: - Namespaces

    /// Stanzas are written in `jabber:component:accept` by default.
    static let scope = XMLNamespaceScope(defaultNamespace: NS.componentAccept, prefixes: [NS.streams: "stream"])

    /// The shape of our header (no `version`: XEP-0114 streams predate
    /// RFC 6120's stream features).
    static let headerShape = StreamHeader(
        name: "stream", namespace: NS.streams, defaultNamespace: NS.componentAccept,
        prefixes: ["stream": NS.streams], attributes: [])
}

extension ComponentSession: ByteTransportDelegate {
    /// Handles bytes from the transport; see `receive(_:)`.
    public func didRead(bytes: UnsafeRawBufferPointer) { receive(bytes) }

    /// The connection is gone; see `transportClosed(failure:)`.
    public func didClose(error: IOError?) { transportClosed(failure: error?.description) }
}

extension Element {
    /// This element with every element in `old` (itself and descendants)
    /// moved to `new`: stanzas change their content namespace between
    /// client and component streams.
    func movingNamespace(_ old: String, to new: String) -> Element {
        var moved = self
        if moved.namespace == old { moved.namespace = new }
        moved.children = children.map { node in
            guard case .element(let child) = node else { return node }
            return .element(child.movingNamespace(old, to: new))
        }
        return moved
    }
}
