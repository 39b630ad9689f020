import XMPPCore
import XMPPNet

/// Runs the steps of RFC 6120 from a TCP connection to a bound resource:
/// stream headers, STARTTLS, SASL and resource binding, plus XEP-0077
/// registration on a fresh stream. XEP-0388 login is in
/// `SASL2Negotiation.swift`.
///
/// Each step waits for the server's one reply; the transport's read timeout
/// bounds the wait.
struct StreamNegotiator {
    let transport: StreamTransport
    var reader: StreamReader
    /// The account's bare JID.
    let account: JID
    var domain: String { account.domainpart }
    /// Whether TLS is on.
    private(set) var isSecure = false
    /// Whether the server refused the FAST token of an XEP-0388 login (or
    /// it had expired): the caller discards it.
    var tokenRejected = false
    private var nextID = 0

    init(transport: StreamTransport, account: JID) {
        self.transport = transport
        self.reader = StreamReader(transport)
        self.account = account
    }

    /// The stream header a client sends (RFC 6120 §4.7), also used on every
    /// restart; once TLS is on it names the account in `from` (§4.7.1),
    /// which FAST needs (XEP-0484 §4.1).
    var header: StreamHeader { Self.clientHeader(domain: domain, from: isSecure ? account : nil) }

    /// The header of a client stream to `domain`, from `from` if given.
    static func clientHeader(domain: String, from: JID? = nil) -> StreamHeader {
        StreamHeader(
            name: "stream", namespace: NS.streams, defaultNamespace: NS.client,
            prefixes: ["stream": NS.streams],
            attributes: (from.map { [Attribute("from", $0.description)] } ?? [])
                + [Attribute("to", domain), Attribute("version", "1.0")])
    }

    /// Opens (or reopens) the stream; returns the server's features.
    mutating func openStream(isolation: isolated (any Actor)? = #isolation) async throws(XMPPClientError) -> Element {
        do {
            transport.restartStream(with: try XMLSerializer.streamOpening(header))
        } catch {
            throw .invalidRequest("the domain cannot be written as XML: \(domain)")
        }
        guard case .streamOpen(let header) = try await reader.next() else {
            throw .unsupportedServer("the server did not open a stream")
        }
        guard header[attribute: "version"].map({ $0.hasPrefix("1.") }) == true else {
            throw .unsupportedServer("the server speaks a pre-RFC 6120 stream (no version='1.0')")
        }
        let features = try await reader.nextElement()
        guard features.name == "features", features.namespace == NS.streams else {
            throw .unsupportedServer("expected stream features, got <\(features.name)>")
        }
        return features
    }

    /// Upgrades to TLS when the server offers STARTTLS (RFC 6120 §5) and
    /// returns the features of the new stream; fails when the server does
    /// not offer it and `required` is set.
    mutating func secure(
        _ features: Element, trust: TLSContext, required: Bool, isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> Element {
        guard features.child("starttls", namespace: NS.tls) != nil else {
            if required { throw .unsupportedServer("the server does not offer TLS") }
            return features
        }
        send(Element("starttls", namespace: NS.tls))
        let answer = try await reader.nextElement()
        guard answer.name == "proceed", answer.namespace == NS.tls else {
            throw .tls("the server refused STARTTLS")
        }
        do {
            try await transport.startTLS(trust, eventsRead: reader.eventsRead)
        } catch let error as XMPPClientError {
            throw error
        } catch {
            throw .tls("\(error)")
        }
        isSecure = true
        return try await openStream()
    }

    // MARK: - SASL

    /// Authenticates with the best mechanism the server offers for
    /// `secret` (RFC 6120 §6): SCRAM-SHA-256, then SCRAM-SHA-1, then PLAIN
    /// but only over TLS. Returns the keys to save, when SCRAM was used.
    mutating func authenticate(
        _ features: Element, username: String, secret: ClientSecret, isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> SavedLogin? {
        let offered = Set(
            features.child("mechanisms", namespace: NS.sasl)?.elements
                .filter { $0.name == "mechanism" }.map(\.text) ?? [])
        switch secret {
        case .saved(let login):
            let mechanism = login.mechanism
            guard offered.contains(mechanism.rawValue) else {
                throw .unsupportedServer("the saved login needs \(mechanism.rawValue), which the server does not offer")
            }
            return try await scram(mechanism, username: username, secret: .keys(login.keys))
        case .password(let password):
            for mechanism in [SASLMechanism.scramSHA256, .scramSHA1] where offered.contains(mechanism.rawValue) {
                return try await scram(mechanism, username: username, secret: .password(password))
            }
            guard offered.contains(SASLMechanism.plain.rawValue) else {
                throw .unsupportedServer("no SASL mechanism in common (offered: \(offered.sorted()))")
            }
            guard isSecure else { throw .unsupportedServer("the server offers only PLAIN without TLS") }
            let message: [UInt8]
            do {
                message = try SASLPlain.encode(username: username, password: password)
            } catch {
                throw .invalidRequest("the username or password cannot be used: \(error)")
            }
            send(auth(.plain, message))
            try await expectSuccess()
            return nil
        }
    }

    private mutating func scram(
        _ mechanism: SASLMechanism, username: String, secret: SCRAMClient.Secret,
        isolation: isolated (any Actor)? = #isolation
    ) async throws(XMPPClientError) -> SavedLogin {
        do {
            var client = try SCRAMClient(mechanism: mechanism, username: username, secret: secret)
            let (_, serverFinal) = try await scramRoundTrips(
                &client, auth(mechanism, client.clientFirstMessage), namespace: NS.sasl)
            try client.receiveServerFinal(serverFinal)
            return SavedLogin(mechanism: mechanism, keys: client.keys!)
        } catch {
            throw Self.clientError(error)
        }
    }

    /// SCRAM's round trips in RFC 6120 (`namespace` `NS.sasl`) or XEP-0388
    /// (`NS.sasl2`) framing: sends `request` with the client-first message,
    /// answers the challenge, and returns the success and the server-final
    /// message it carries, for the caller to check.
    mutating func scramRoundTrips(
        _ client: inout SCRAMClient, _ request: Element, namespace: String,
        isolation: isolated (any Actor)? = #isolation
    ) async throws -> (success: Element, serverFinal: [UInt8]) {
        send(request)
        let challenge = try await reader.nextElement()
        try checkNotFailure(challenge, namespace: namespace)
        guard challenge.name == "challenge", challenge.namespace == namespace,
            let serverFirst = try SASLPayload.decode(challenge.text)
        else { throw XMPPClientError.unsupportedServer("unexpected SASL reply <\(challenge.name)>") }
        let final = try client.receiveServerFirst(serverFirst)
        send(Element("response", namespace: namespace, children: [.text(SASLPayload.encode(final))]))
        let success = try await reader.nextElement()
        try checkNotFailure(success, namespace: namespace)
        // XEP-0388 carries the data in <additional-data/>, RFC 6120 as text.
        let data = namespace == NS.sasl2 ? success.childText("additional-data", namespace: NS.sasl2) : success.text
        guard success.name == "success", success.namespace == namespace,
            let serverFinal = try SASLPayload.decode(data ?? "")
        else { throw XMPPClientError.unsupportedServer("unexpected SASL reply <\(success.name)>") }
        return (success, serverFinal)
    }

    /// What a failed SCRAM exchange means to the caller.
    static func clientError(_ error: any Error) -> XMPPClientError {
        switch error {
        case let error as XMPPClientError: error
        case SASLClientError.savedKeysOutdated: .notAuthorized
        case SASLClientError.invalidUsername, SASLClientError.invalidPassword:
            .invalidRequest("the username or password cannot be used")
        case SASLClientError.downgradeDetected:
            .unsupportedServer(
                "the server's SCRAM hash of its mechanisms does not match what it advertised: "
                    + "someone on the path may have removed the stronger ones (XEP-0474)")
        default: .unsupportedServer("SASL failed: \(error)")
        }
    }

    private func auth(_ mechanism: SASLMechanism, _ message: [UInt8]) -> Element {
        Element(
            "auth", namespace: NS.sasl, attributes: ["mechanism": mechanism.rawValue],
            children: [.text(SASLPayload.encode(message))])
    }

    private mutating func expectSuccess(isolation: isolated (any Actor)? = #isolation) async throws(XMPPClientError) {
        let outcome = try await reader.nextElement()
        try checkNotFailure(outcome, namespace: NS.sasl)
        guard outcome.name == "success", outcome.namespace == NS.sasl else {
            throw .unsupportedServer("unexpected SASL reply <\(outcome.name)>")
        }
    }

    /// Throws what a SASL `<failure/>` in `namespace` (RFC 6120 or XEP-0388)
    /// means; returns for any other element.
    func checkNotFailure(_ element: Element, namespace: String) throws(XMPPClientError) {
        guard element.name == "failure", element.namespace == namespace else { return }
        let condition = element.elements.first { $0.namespace == NS.sasl && $0.name != "text" }?.name
        switch condition {
        case "not-authorized", "credentials-expired", "account-disabled", "invalid-authzid":
            throw .notAuthorized
        case "temporary-auth-failure":
            throw .timedOut
        default:
            throw .unsupportedServer("authentication failed: \(condition ?? "no reason")")
        }
    }

    // MARK: - Binding and requests

    /// Binds `resource` (or one the server picks) and returns the full JID
    /// (RFC 6120 §7).
    mutating func bind(_ resource: String?, isolation: isolated (any Actor)? = #isolation) async throws(XMPPClientError)
        -> JID
    {
        var bind = Element("bind", namespace: NS.bind)
        if let resource {
            bind.append(Element("resource", namespace: NS.bind, children: [.text(resource)]))
        }
        let reply = try await request(.set, bind)
        guard let text = reply.payload?.childText("jid", namespace: NS.bind), let jid = try? JID(text),
            jid.resourcepart != nil
        else { throw .unsupportedServer("the bind result has no full JID") }
        return jid
    }

    /// Asks to resume the session `previous` belongs to (XEP-0198 §5),
    /// instead of binding. Returns its state with the server's count
    /// applied, or nil when the server refuses (the session is gone): then
    /// bind as usual.
    mutating func resume(_ previous: StreamManagementState<Element>, isolation: isolated (any Actor)? = #isolation)
        async throws(XMPPClientError)
        -> StreamManagementState<Element>?
    {
        guard let id = previous.resumptionID else { return nil }
        send(
            Element(
                "resume", namespace: NS.sm,
                attributes: ["previd": id, "h": String(previous.handledInbound)]))
        return try Self.resumed(previous, try await reader.nextElement())
    }

    /// `previous` with the count of `answer` applied when it is
    /// `<resumed/>`; nil for anything else (`<failed/>`).
    static func resumed(_ previous: StreamManagementState<Element>, _ answer: Element) throws(XMPPClientError)
        -> StreamManagementState<Element>?
    {
        guard answer.name == "resumed", answer.namespace == NS.sm,
            let h = answer[attribute: "h"].flatMap(UInt32.init)
        else { return nil }
        var state = previous
        do {
            try state.acknowledge(h)
        } catch {
            throw .unsupportedServer("the server acknowledged \(h) stanzas of \(previous.sentOutbound) sent")
        }
        return state
    }

    /// Creates `username` with `password` (XEP-0077 §3.1), before logging in.
    mutating func register(username: String, password: String, isolation: isolated (any Actor)? = #isolation)
        async throws(XMPPClientError)
    {
        var query = Element("query", namespace: NS.register)
        query.append(Element("username", namespace: NS.register, children: [.text(username)]))
        query.append(Element("password", namespace: NS.register, children: [.text(password)]))
        do {
            _ = try await request(.set, query)
        } catch .stanzaError(.conflict, _) {
            throw .registrationConflict
        } catch .stanzaError(let condition, let text) where condition != .internalServerError {
            throw .registrationNotAllowed(text ?? condition.rawValue)
        }
    }

    /// Sends an IQ and waits for its reply: the next element, since nothing
    /// else arrives during negotiation. An error reply is thrown.
    private mutating func request(_ type: IQ.IQType, _ payload: Element, isolation: isolated (any Actor)? = #isolation)
        async throws(XMPPClientError) -> IQ
    {
        nextID += 1
        let id = "negotiation-\(nextID)"
        send(IQ(type: type, id: id, payload: payload).element)
        let element = try await reader.nextElement()
        guard let reply = IQ(element), reply.id == id else {
            throw .unsupportedServer("expected the reply to our request, got <\(element.name)>")
        }
        if reply.type == .error {
            let error = reply.error
            throw .stanzaError(error?.condition ?? .undefinedCondition, text: error?.text)
        }
        return reply
    }

    /// Serializes and sends one element in the client's namespace scope.
    func send(_ element: Element) {
        transport.send(ClientWire.bytes(element))
    }
}

/// What a successful SCRAM login leaves to save for the next one, and the
/// FAST token the server issued since, if any.
public struct SavedLogin: Sendable, Hashable {
    /// The mechanism used; the keys only work with it.
    public var mechanism: SASLMechanism
    /// The client and server keys with the salt and iteration count.
    public var keys: SCRAMClientKeys
    /// A token for one-round-trip logins (XEP-0484), tried before the keys.
    public var fastToken: FASTToken?

    /// Pairs a mechanism with keys saved from it, and a token if there is one.
    public init(mechanism: SASLMechanism, keys: SCRAMClientKeys, fastToken: FASTToken? = nil) {
        self.mechanism = mechanism
        self.keys = keys
        self.fastToken = fastToken
    }
}

/// How elements are written on a client stream: `jabber:client` as the
/// default namespace, `stream:` for the streams namespace.
enum ClientWire {
    static let scope = XMLNamespaceScope(defaultNamespace: NS.client, prefixes: [NS.streams: "stream"])

    /// `element` as bytes; an element that cannot be serialized (a control
    /// character in a body) becomes nothing rather than broken XML.
    static func bytes(_ element: Element) -> [UInt8] {
        (try? XMLSerializer.bytes(element, in: scope)) ?? []
    }
}
