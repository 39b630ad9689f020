import Foundation
import XMPPCore
import XMPPNet

/// An XMPP client for one account: connects, logs in and stays connected
/// (reconnecting after drops), keeps the roster and contacts' presence, and
/// archives chat messages locally.
///
/// Everything happens on the actor; what the server sends is published as
/// ``ClientEvent``s to every sequence from ``events()``. Methods that talk
/// to the server are `async` and throw ``XMPPClientError``.
public actor XMPPClient {
    /// The settings the client was made with (the secret may change with
    /// ``changePassword(to:)``).
    public nonisolated let configuration: ClientConfiguration
    /// Where the connection stands.
    public private(set) var state: ConnectionState = .disconnected(nil)
    /// What to save after a SCRAM login so the next one needs no password;
    /// `nil` before the first login or after a PLAIN one.
    public internal(set) var savedLogin: SavedLogin?
    /// How the current or last connection logged in: the SASL profile,
    /// mechanism and channel binding.
    public internal(set) var loginDetails: LoginDetails?
    /// The full JID of the current session.
    public var boundJID: JID? { connection?.jid }

    let store: ClientStore
    nonisolated let broadcaster = EventBroadcaster()
    var secret: ClientSecret
    /// The FAST token to log in with next (XEP-0484): the saved one, then
    /// each the server issues; dropped when the server refuses it.
    var fastToken: FASTToken?
    var connection: Connection?
    /// Roster contacts by bare JID.
    var contacts: [JID: RosterContact] = [:]
    /// Contacts' available resources: bare JID → full JID → presence.
    var presences: [JID: [JID: ContactPresence]] = [:]
    /// Our own presence, sent again after each reconnect.
    var ownPresence = Presence()
    /// The SHA-1 of our avatar for presence (XEP-0153): "" for none, nil
    /// until known.
    var ownAvatarHash: String?
    /// Contacts' avatar hashes from their XEP-0084 metadata, by bare JID:
    /// what their presence shows when it carries no XEP-0153 hash.
    var avatarHashes: [JID: String] = [:]
    /// The server's HTTP upload service, once found (XEP-0363).
    var uploadServiceJID: JID?
    /// Our archive queries in flight, with their results so far, by query
    /// id (XEP-0313).
    var archiveQueries: [String: ArchiveQuery] = [:]
    /// The rooms we are in or joining, by bare JID (XEP-0045); joined
    /// again in each new session.
    var rooms: [JID: JoinedRoom] = [:]
    /// Joins, nickname changes and exits waiting for their room's answer,
    /// by the room's bare JID.
    var roomWaiters: [JID: RoomWaiter] = [:]
    /// XEP-0198 counters and unacknowledged stanzas; kept after a drop so
    /// the session can be resumed, cleared by `disconnect`.
    var streamManagement: StreamManagementState<Element>?
    /// The full JID of the last session, which a resumed one keeps.
    private var lastBoundJID: JID?
    /// IQ requests waiting for their answer, by id.
    private var pending: [String: PendingRequest] = [:]
    /// Whether the user wants to be connected: set by `connect`, cleared by
    /// `disconnect` and by errors that a retry cannot fix. While it is
    /// false no reconnect is scheduled or announced (`.reconnecting`), and
    /// it changes in the same actor turn as the state it goes with.
    var wantsConnection = false
    private var reconnectTask: Task<Void, Never>?
    /// The connection whose stream we closed, waiting for the server's
    /// closing tag.
    private var closingGeneration: Int?
    private var generation = 0
    private var nextID = 0

    /// One live, logged-in connection.
    struct Connection {
        let transport: StreamTransport
        let jid: JID
        let generation: Int
        let features: Element
        var readTask: Task<Void, Never>?
        var keepaliveTask: Task<Void, Never>?
    }

    /// An IQ request waiting for its answer, and the task that gives up on
    /// it after `configuration.timeout`.
    private struct PendingRequest {
        let waiter: CheckedContinuation<IQ, any Error>
        let deadline: Task<Void, Never>
    }

    /// Creates a client; nothing is sent until ``connect()``.
    /// - Throws: `.storage` if the local store cannot be opened.
    public init(configuration: ClientConfiguration) throws(XMPPClientError) {
        self.configuration = configuration
        self.secret = configuration.secret
        if case .saved(let login) = configuration.secret { fastToken = login.fastToken }
        do {
            store = try configuration.storePath.map { try ClientStore(path: $0) } ?? ClientStore.inMemory()
            // Waits for the store's thread, as opening it did: the cached
            // roster is there before the first call.
            let account = configuration.jid
            let cached = try store.queue.perform { try $0.cachedRoster(account: account) }
            contacts = Dictionary(cached.contacts.map { ($0.jid, $0) }, uniquingKeysWith: { $1 })
        } catch {
            throw .storage("\(error)")
        }
    }

    /// A sequence of everything that happens from now on, until the client
    /// is gone. Each call returns a new, independent sequence.
    public nonisolated func events() -> AsyncStream<ClientEvent> {
        broadcaster.subscribe()
    }

    /// The account's bare JID.
    nonisolated var account: JID { configuration.jid }

    // MARK: - Connecting

    /// Connects, logs in, binds, fetches the roster and sends the initial
    /// presence; from then on reconnects after drops until ``disconnect()``.
    /// Returns at once if already connected.
    public func connect() async throws(XMPPClientError) {
        guard connection == nil else { return }
        wantsConnection = true
        reconnectTask?.cancel()
        reconnectTask = nil
        setState(.connecting)
        do {
            try await establish()
        } catch {
            wantsConnection = false
            setState(.disconnected(error))
            throw error
        }
    }

    /// Ends the session politely (unavailable presence, closing tag) and
    /// stops reconnecting; that leaves every room, which a later
    /// ``connect()`` does not join again (only those bookmarked for
    /// autojoin). Safe to call in any state.
    public func disconnect() async {
        wantsConnection = false
        rooms.removeAll()
        let handled = streamManagement?.handledInbound
        streamManagement = nil
        reconnectTask?.cancel()
        reconnectTask = nil
        guard let connection else {
            setState(.disconnected(nil))
            return
        }
        // RFC 6120 §4.4: send our closing tag, then wait (briefly) for the
        // server's, so everything we sent was handled before the TCP close.
        closingGeneration = connection.generation
        var goodbye = ownPresence.type == .unavailable ? [] : ClientWire.bytes(Presence(type: .unavailable).element)
        // Acknowledge everything received, or the server would hand it on
        // (to offline storage) as never delivered (XEP-0198).
        if let handled { goodbye += ClientWire.bytes(Element("a", namespace: NS.sm, attributes: ["h": String(handled)])) }
        goodbye += XMLSerializer.streamClosing(StreamNegotiator.clientHeader(domain: account.domainpart))
        connection.transport.send(goodbye)
        let transport = connection.transport
        let clock = configuration.clock
        let deadline = Task {
            try await clock.sleep(for: .seconds(2))
            transport.abort(.timedOut)
        }
        await connection.readTask?.value
        deadline.cancel()
        // However the server ended its side, the user asked for this.
        setState(.disconnected(nil))
    }

    /// Opens a connection and logs in, resuming the previous session when
    /// it can (XEP-0198 §5); on success the read loop runs. When the server
    /// refused the FAST token and did not let the secret be tried on that
    /// stream, tries once more on a new one, without the token.
    private func establish() async throws(XMPPClientError) {
        let hadToken = fastToken != nil
        do {
            try await establishOnce()
        } catch let error where hadToken && fastToken == nil && error != .notAuthorized {
            try await establishOnce()
        }
    }

    private func establishOnce() async throws(XMPPClientError) {
        let transport = try await openTransport()
        transport.setReadTimeout(configuration.timeout)
        let previous = streamManagement
        streamManagement = nil
        do {
            var negotiator = StreamNegotiator(transport: transport, account: account)
            var features = try await negotiator.openStream()
            features = try await negotiator.secure(
                features, trust: configuration.tlsContext(), required: configuration.requireTLS)
            let login = try await logIn(&negotiator, features, resuming: lastBoundJID == nil ? nil : previous)
            features = login.features
            let offersStreamManagement = features.child("sm", namespace: NS.sm) != nil
            var resumed = login.resumed
            if resumed == nil, login.jid == nil, !login.triedResumption, offersStreamManagement, let previous,
                lastBoundJID != nil
            {
                resumed = try await negotiator.resume(previous)
            }
            let jid: JID
            if resumed != nil, let previousJID = lastBoundJID {
                jid = previousJID
                streamManagement = resumed
            } else if let bound = login.jid {
                jid = bound
            } else {
                jid = try await negotiator.bind(configuration.resource)
            }
            lastBoundJID = jid
            generation += 1
            let current = generation
            let reader = negotiator.reader
            connection = Connection(transport: transport, jid: jid, generation: current, features: features)
            connection?.readTask = Task { await self.readLoop(reader, generation: current) }
            if resumed != nil {
                resendUnacknowledged()
            } else {
                if let answer = login.streamManagementAnswer {
                    streamManagement = StreamManagementState()
                    handleStreamManagement(answer)
                } else if offersStreamManagement, configuration.streamManagement {
                    streamManagement = StreamManagementState()
                    transport.send(
                        ClientWire.bytes(Element("enable", namespace: NS.sm, attributes: ["resume": "true"])))
                }
                try await startSession(
                    legacySessionOffered: features.child("session", namespace: NS.session),
                    carbonsEnabled: login.carbonsEnabled)
                // Messages the server may not have received before the drop
                // go again; receivers drop duplicates by id.
                for stanza in previous?.unacknowledged ?? [] where stanza.name == "message" { transmit(stanza) }
            }
            transport.setReadTimeout(configuration.keepaliveInterval + configuration.timeout)
            connection?.keepaliveTask = Task { await self.keepalive(generation: current) }
            setState(.connected(jid))
            // A resumed session is still in its rooms; a new one is not.
            if resumed == nil { await enterRooms() }
            // Messages this device missed (sent from another one, or while
            // it was away) come from the server's archive, when it has one.
            if resumed == nil, configuration.syncsHistory { _ = try? await syncHistory() }
        } catch {
            if streamManagement == nil { streamManagement = previous }
            transport.abort(error)
            if let connection, connection.transport === transport { await connection.readTask?.value }
            throw error
        }
    }

    /// Connects to the configured host (by default the JID's domain)
    /// through the configured connector.
    func openTransport() async throws(XMPPClientError) -> StreamTransport {
        try await StreamTransport.connect(
            host: configuration.host ?? account.domainpart, port: configuration.port, timeout: configuration.timeout,
            through: configuration.connector)
    }

    /// What follows binding: the legacy session request when the server
    /// requires it, the roster, carbons unless Bind 2 enabled them, and our
    /// presence.
    private func startSession(legacySessionOffered session: Element?, carbonsEnabled: Bool)
        async throws(XMPPClientError)
    {
        if let session, session.child("optional", namespace: NS.session) == nil {
            _ = try await request(.set, payload: Element("session", namespace: NS.session))
        }
        try await syncRoster()
        if !carbonsEnabled { await enableCarbons() }
        await loadOwnAvatarHash()
        // Staying unavailable means sending no presence at all (RFC 6121
        // §4.2): messages to the bare JID then wait offline.
        if ownPresence.type != .unavailable { send(stamped(ownPresence).element) }
    }

    // MARK: - Reading

    private func readLoop(_ reader: StreamReader, generation: Int) async {
        var reader = reader
        var failure: XMPPClientError?
        do {
            while true {
                switch try await reader.next() {
                case .element(let element): await handle(element)
                case .streamClose:
                    let answer =
                        closingGeneration == generation
                        ? [] : XMLSerializer.streamClosing(StreamNegotiator.clientHeader(domain: account.domainpart))
                    connection?.transport.close(sending: answer)
                case .streamOpen, .error: break
                }
            }
        } catch .notConnected {
            failure = nil
        } catch {
            failure = error
        }
        connectionEnded(generation: generation, error: failure)
    }

    private func handle(_ element: Element) async {
        if element.namespace == NS.sm { return handleStreamManagement(element) }
        if Stanza(element) != nil { streamManagement?.handledInbound &+= 1 }
        if let iq = IQ(element) {
            await handle(iq)
        } else if let message = Message(element) {
            await handle(message)
        } else if let presence = Presence(element) {
            handle(presence)
        }
    }

    private func handle(_ iq: IQ) async {
        switch iq.type {
        case .result, .error:
            if let id = iq.id { finishRequest(id, with: .success(iq)) }
        case .get, .set:
            await handleRequest(iq)
        case nil:
            break
        }
    }

    /// Answers the server's requests: roster pushes, pings, disco#info; anything else
    /// is not served by this client (RFC 6120 §8.4).
    private func handleRequest(_ iq: IQ) async {
        let payload = iq.payload
        if iq.type == .set, payload?.name == "query", payload?.namespace == NS.roster {
            return await handleRosterPush(iq)
        }
        if iq.type == .get, payload?.name == "ping", payload?.namespace == NS.ping {
            return send(iq.result())
        }
        if iq.type == .get, payload?.name == "query", payload?.namespace == NS.discoInfo {
            return answerDiscoInfo(iq)
        }
        if let reply = iq.errorReply(StanzaError(.serviceUnavailable)) { send(reply) }
    }

    /// Cleans up after a connection ended; reconnects if the user still
    /// wants to be connected and a retry can help.
    private func connectionEnded(generation: Int, error: XMPPClientError?) {
        guard let ended = connection, ended.generation == generation else { return }
        ended.keepaliveTask?.cancel()
        connection = nil
        presences.removeAll()
        for id in Array(pending.keys) { finishRequest(id, with: .failure(.notConnected)) }
        for room in Array(roomWaiters.keys) { finishRoomWait(room, with: .failure(.notConnected)) }
        let retryable: Bool =
            switch error {
            case .streamError(.conflict, _), .notAuthorized, .streamError(.notAuthorized, _): false
            default: true
            }
        guard wantsConnection, configuration.reconnect.isEnabled, retryable else {
            wantsConnection = false
            streamManagement = nil
            // Out of every room until the next session joins them again.
            for room in Array(rooms.keys) { rooms[room] = rooms[room]?.forRejoining }
            setState(.disconnected(error))
            return
        }
        reconnectTask = Task { await self.reconnect(after: error) }
    }

    private func reconnect(after error: XMPPClientError?) async {
        var lastError = error
        var attempt = 0
        while wantsConnection, connection == nil, !Task.isCancelled {
            attempt += 1
            let delay = configuration.reconnect.delay(forAttempt: attempt, random: Double.random(in: 0..<1))
            setState(.reconnecting(attempt: attempt, delay: delay, lastError: lastError))
            do { try await configuration.clock.sleep(for: delay) } catch { return }
            guard wantsConnection, !Task.isCancelled else { return }
            do {
                try await establish()
                reconnectTask = nil
                return
            } catch .notAuthorized {
                wantsConnection = false
                setState(.disconnected(.notAuthorized))
                return
            } catch {
                lastError = error
            }
        }
    }

    private func keepalive(generation: Int) async {
        while !Task.isCancelled {
            do { try await configuration.clock.sleep(for: configuration.keepaliveInterval) } catch { return }
            guard let connection, connection.generation == generation else { return }
            nextID += 1
            send(IQ(type: .get, id: "keepalive-\(nextID)", payload: Element("ping", namespace: NS.ping)).element)
        }
    }

    // MARK: - Sending

    func setState(_ newState: ConnectionState) {
        guard newState != state else { return }
        state = newState
        broadcaster.publish(.connectionState(newState))
    }

    /// Sends one element on the current connection, if there is one.
    func send(_ element: Element) {
        transmit(element)
    }

    /// Sends `element`, counting it for stream management when it is a
    /// stanza; false when there is no connection or it cannot be written.
    @discardableResult
    func transmit(_ element: Element) -> Bool {
        guard let connection else { return false }
        let bytes = ClientWire.bytes(element)
        guard !bytes.isEmpty else { return false }
        if streamManagement != nil, Stanza(element) != nil { streamManagement?.recordSent(element, byteCount: bytes.count) }
        connection.transport.send(bytes)
        if element.name == "message", streamManagement?.ackRequested == false {
            streamManagement?.ackRequested = true
            connection.transport.send(ClientWire.bytes(Element("r", namespace: NS.sm)))
        }
        return true
    }

    /// A fresh stanza id.
    func makeID() -> String {
        UUID().uuidString
    }

    /// Sends an IQ request and returns its result.
    /// - Throws: `.stanzaError` for an error reply, `.timedOut` after
    ///   `configuration.timeout`, `.notConnected` if the connection is or
    ///   goes away first.
    func request(_ type: IQ.IQType, to: JID? = nil, payload: Element) async throws(XMPPClientError) -> IQ {
        guard let connection else { throw .notConnected }
        let id = makeID()
        let element = IQ(type: type, to: to, id: id, payload: payload).element
        let bytes = ClientWire.bytes(element)
        guard !bytes.isEmpty else { throw .invalidRequest("the request contains characters XML cannot carry") }
        let (clock, timeout) = (configuration.clock, configuration.timeout)
        let reply: IQ
        do {
            reply = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<IQ, any Error>) in
                    let deadline = Task {
                        do { try await clock.sleep(for: timeout) } catch { return }
                        self.finishRequest(id, with: .failure(.timedOut))
                    }
                    pending[id] = PendingRequest(waiter: waiter, deadline: deadline)
                    if streamManagement != nil { streamManagement?.recordSent(element, byteCount: bytes.count) }
                    connection.transport.send(bytes)
                }
            } onCancel: {
                Task { await self.finishRequest(id, with: .failure(.notConnected)) }
            }
        } catch let error as XMPPClientError {
            throw error
        } catch {
            throw .notConnected
        }
        if reply.type == .error {
            let error = reply.error
            throw .stanzaError(error?.condition ?? .undefinedCondition, text: error?.text)
        }
        return reply
    }

    /// Ends the wait for request `id`, if it still waits, with `outcome`,
    /// and stops its timeout (so nothing sleeps on the clock for it).
    private func finishRequest(_ id: String, with outcome: Result<IQ, XMPPClientError>) {
        guard let request = pending.removeValue(forKey: id) else { return }
        request.deadline.cancel()
        request.waiter.resume(with: outcome)
    }
}
