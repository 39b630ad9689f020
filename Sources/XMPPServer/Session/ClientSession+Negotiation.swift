import XMPPCore

/// RFC 6120 §4 (stream headers and features) and §5 (STARTTLS).
extension ClientSession {
    /// Checks the client's stream header and answers with ours and the
    /// features of the current state (RFC 6120 §4.7, §4.3.2).
    func receiveHeader(_ header: StreamHeader) {
        guard header.name == "stream", header.namespace == NS.streams else {
            return fail(StreamError(.invalidNamespace, text: "expected a stream in \(NS.streams)"))
        }
        guard header.defaultNamespace == NS.client else {
            return fail(StreamError(.invalidNamespace, text: "the content namespace must be \(NS.client)"))
        }
        guard let to = header[attribute: "to"] else {
            return fail(StreamError(.improperAddressing, text: "the stream header needs a 'to' attribute"))
        }
        guard let domain = try? JID(to), domain.isDomainOnly, domain.domainpart == server.domain else {
            return fail(StreamError(.hostUnknown, text: "this server serves \(server.domain)"))
        }
        guard let version = header[attribute: "version"], Self.majorVersion(of: version).map({ $0 >= 1 }) == true
        else {
            return fail(StreamError(.unsupportedVersion, text: "XMPP 1.0 streams only"))
        }
        let from = header[attribute: "from"].flatMap { try? JID($0) }
        streamLanguage = header[attribute: "lang", namespace: NS.xml].flatMap(Self.languageTag)
        sendHeader(to: from)
        sendFeatures()
    }

    /// Sends our opening tag, with a fresh stream id (RFC 6120 §4.7.3).
    func sendHeader(to peer: JID?) {
        streamID = Base64.encode(Crypto.randomBytes(count: 12))
        var attributes = [
            Attribute("from", server.domain), Attribute("id", streamID), Attribute("version", "1.0"),
            Attribute("lang", namespace: NS.xml, "en"),
        ]
        if let peer { attributes.insert(Attribute("to", peer.description), at: 0) }
        var header = Self.replyHeaderShape
        header.attributes = attributes
        do {
            send(framing == .webSocket ? try Self.openElement(attributes) : try XMLSerializer.streamOpening(header))
            headerSent = true
        } catch {
            log.error("cannot write our stream header: \(error)")
            closeTransport()
        }
    }

    /// `value` if it looks like a BCP 47 language tag (letters, digits and
    /// hyphens, at most 35 characters), else nil: the stream's language is
    /// copied into every stanza, so nothing longer or stranger is kept.
    static func languageTag(_ value: String) -> String? {
        guard (1...35).contains(value.utf8.count),
            value.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0 & 0xDF) })
        else { return nil }
        return value
    }

    /// The major number of a `version` attribute ("1.0" → 1), or nil when
    /// it is not `major.minor` (RFC 6120 §4.7.5).
    static func majorVersion(of version: String) -> Int? {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let major = Int(parts[0]), Int(parts[1]) != nil, major >= 0 else { return nil }
        return major
    }

    /// Sends `<stream:features/>` for the current state: STARTTLS, SASL and
    /// registration before authentication; binding and what the features
    /// add after it (RFC 6120 §4.3.2).
    func sendFeatures() {
        var features = Element("features", namespace: NS.streams)
        switch phase {
        case .negotiating:
            if tls == nil, framing == .xmlStream, server.tlsContext != nil {
                var starttls = Element("starttls", namespace: NS.tls)
                if server.tlsRequired { starttls.append(Element("required", namespace: NS.tls)) }
                features.append(starttls)
            }
            if allowsCredentials {
                var mechanisms = Element("mechanisms", namespace: NS.sasl)
                for mechanism in offeredMechanisms {
                    var element = Element("mechanism", namespace: NS.sasl)
                    element.append(text: mechanism.rawValue)
                    mechanisms.append(element)
                }
                features.append(mechanisms)
                if let authentication = sasl2Feature { features.append(authentication) }
                if let channelBinding = channelBindingFeature { features.append(channelBinding) }
            }
        case .authenticated:
            features.append(Element("bind", namespace: NS.bind))
            features.append(
                Element("session", namespace: NS.session, children: [.element(Element("optional", namespace: NS.session))]))
        case .bound, .closed:
            break
        }
        for feature in server.hooks.streamFeatures(for: self) { features.append(feature) }
        send(features)
    }

    /// Dispatches a top-level element by state: negotiation elements before
    /// binding, stanzas to the router after.
    func receiveElement(_ element: Element) {
        switch phase {
        case .negotiating:
            receiveBeforeAuthentication(element)
        case .authenticated:
            receiveBeforeBinding(element)
        case .bound:
            receiveStanzaOrNonza(element)
        case .closed:
            break
        }
    }

    private func receiveBeforeAuthentication(_ element: Element) {
        // XEP-0388 §3.5: nothing else while a SASL2 exchange runs.
        if sasl.request != nil, element.namespace != NS.sasl2 {
            return fail(StreamError(.policyViolation, text: "<\(element.name)/> during SASL2 authentication"))
        }
        switch (element.namespace, element.name) {
        case (NS.tls, "starttls"):
            startTLS()
        case (NS.sasl, _):
            receiveSASL(element)
        case (NS.sasl2, _):
            receiveSASL2(element)
        case (NS.client, "iq") where allowsCredentials:
            // In-band registration (XEP-0077) is the only thing an
            // unauthenticated client may ask for.
            server.router.routeUnauthenticated(element, from: self)
        default:
            fail(StreamError(.notAuthorized, text: "authenticate first"))
        }
    }

    /// Handles an element the router does not take: nonzas that features
    /// registered (CSI, stream management), else an unsupported element.
    func receiveStanzaOrNonza(_ element: Element) {
        if element.namespace == NS.client {
            switch element.name {
            case "message", "presence", "iq":
                streamManagement?.handledInbound &+= 1
                return server.router.route(element, from: self)
            default:
                return fail(StreamError(.unsupportedStanzaType, text: "<\(element.name)/> is not a stanza"))
            }
        }
        guard server.hooks.handleNonza(element, session: self) else {
            return fail(StreamError(.unsupportedStanzaType, text: "<\(element.name) xmlns='\(element.namespace)'/> is not supported"))
        }
    }

    /// STARTTLS (RFC 6120 §5.4.2): `<proceed/>`, then TLS from the next
    /// byte on, then a new stream.
    private func startTLS() {
        guard tls == nil, framing == .xmlStream, let context = server.tlsContext else {
            log.notice("STARTTLS refused: \(tls == nil ? "no certificate" : "already secured")")
            send(Element("failure", namespace: NS.tls))
            sendStreamClose()
            return closeTransport()
        }
        send(Element("proceed", namespace: NS.tls))
        tls = TLSSession(context: context)
        restartStream()
        log.debug("STARTTLS: handshake begins")
    }

    /// The TLS protecting the stream: its own (STARTTLS, direct TLS), or,
    /// over a WebSocket, that of the HTTPS connection below it.
    var streamTLS: TLSSession? { tls ?? transport?.underlyingTLS }

    /// Whether the stream is encrypted.
    var isSecure: Bool { streamTLS != nil }

    /// Whether the client may send credentials (log in, register): over
    /// TLS; without it when the TLS policy allows that; and on a WebSocket
    /// over plain HTTP, which is served on loopback only, where SCRAM (never
    /// PLAIN: `offeredMechanisms`) crosses no network.
    var allowsCredentials: Bool {
        isSecure || !server.tlsRequired || (framing == .webSocket && transport?.peerIsLoopback == true)
    }
}
