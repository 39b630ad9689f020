import XMPPCore

/// The steps the runner takes on a client's behalf the way XMPPFramework
/// 4.1 takes them (`XMPPFRAMEWORK.md` §1, §3, §5): its stream header,
/// its SCRAM messages, its bind request. In these lockstep phases
/// XMPPFramework takes the next element as the answer, so each step
/// requires that exactly one element came back.
extension ScansionRunner {
    /// `connects` for an `xmppframework` client: stream, features,
    /// SCRAM-SHA-1, restart, features, bind (the session is offered as
    /// optional, so XMPPFramework skips it).
    func loginAsXMPPFramework(_ action: ScansionScript.Action) throws(ScansionFailure) {
        openConnectionIfNeeded(for: action)
        try openStream(action)
        let features = try nextOnly(action, "the stream features")
        let mechanisms = features.child("mechanisms", namespace: NS.sasl)?.elements.map(\.text) ?? []
        guard mechanisms.contains(SASLMechanism.scramSHA1.rawValue) else {
            throw failure(action, "XMPPFramework authenticates with SCRAM-SHA-1, which is not offered")
        }
        try authenticate(with: .scramSHA1, action)
        let success = try nextOnly(action, "<success/>")
        guard success.name == "success", success.namespace == NS.sasl else {
            throw failure(action, "authentication failed: \(ScansionXML.string(success))")
        }
        try openStream(action)
        let boundFeatures = try nextOnly(action, "the stream features")
        guard boundFeatures.child("bind", namespace: NS.bind) != nil else {
            throw failure(action, "XMPPFramework waits for <bind/> in the features after SASL")
        }
        let definition = client(of: action)
        let resource = definition.resource ?? (try? JID(definition.jid))?.resourcepart
        let id = Self.xmppFrameworkID()
        let bind =
            resource.map {
                "<bind xmlns=\"\(NS.bind)\"><resource>\(ScansionXML.escaped($0))</resource></bind>"
            } ?? "<bind xmlns=\"\(NS.bind)\"/>"
        connections[action.client]!.client.send("<iq type=\"set\" id=\"\(id)\">\(bind)</iq>")
        let reply = try nextOnly(action, "the bind result")
        guard reply[attribute: "type"] == "result", reply[attribute: "id"] == id,
            connections[action.client]!.jid != nil
        else {
            throw failure(action, "bind failed: \(ScansionXML.string(reply))")
        }
    }

    /// `opens a stream`: XMPPFramework's header (the XML declaration only
    /// on a connection's first stream), then the server's header, which
    /// must be the first thing back. The features are left to the script.
    func openStream(_ action: ScansionScript.Action) throws(ScansionFailure) {
        openConnectionIfNeeded(for: action)
        let domain = (try? JID(client(of: action).jid))?.domainpart ?? ""
        let first = connections[action.client]!.streamsOpened == 0
        connections[action.client]!.streamsOpened += 1
        connections[action.client]!.client.send(
            (first ? "<?xml version='1.0'?>" : "")
                + "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'"
                + " version='1.0' to='\(domain)'>")
        try readAll(for: action)
        guard let unit = connections[action.client]!.unread.first, case .header = unit.kind else {
            throw failure(
                action, "expected the server's stream header", received: connections[action.client]!.unread.first?.raw)
        }
        connections[action.client]!.unread.removeFirst()
    }

    /// `starts TLS`: XMPPFramework's `<starttls/>`, the `<proceed/>` that
    /// must come alone, then the handshake as GCDAsyncSocket on
    /// SecureTransport makes it (TLS 1.2 at most), trusting the server's
    /// certificate as an app with the trust hooks of §2 does.
    func startTLS(_ action: ScansionScript.Action) throws(ScansionFailure) {
        _ = try connection(for: action)
        connections[action.client]!.client.send("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>")
        let proceed = try nextOnly(action, "<proceed/>")
        guard proceed.name == "proceed", proceed.namespace == NS.tls else {
            throw failure(action, "expected <proceed/>; XMPPFramework closes the connection on anything else")
        }
        do {
            try connections[action.client]!.client.handshake(maximumVersion: .tls1_2)
        } catch {
            throw failure(action, "TLS 1.2 handshake failed: \(error)")
        }
    }

    /// `authenticates with SCRAM-…`: `<auth/>` with the client-first
    /// message, the `<challenge/>` (which must come alone), `<response/>`
    /// with the proof. The `<success/>` is the script's to expect; the
    /// runner checks its server signature as it arrives.
    func authenticate(with mechanism: SASLMechanism, _ action: ScansionScript.Action) throws(ScansionFailure) {
        _ = try connection(for: action)
        let definition = client(of: action)
        let username = (try? JID(definition.jid))?.localpart ?? ""
        var scram: SCRAMClient
        do {
            scram = try SCRAMClient(mechanism: mechanism, username: username, secret: .password(definition.password))
        } catch {
            throw failure(action, "cannot start SCRAM: \(error)")
        }
        connections[action.client]!.client.send(
            "<auth xmlns=\"\(NS.sasl)\" mechanism=\"\(mechanism.rawValue)\">"
                + "\(SASLPayload.encode(scram.clientFirstMessage))</auth>")
        let challenge = try nextOnly(action, "a SASL <challenge/>")
        guard challenge.name == "challenge", challenge.namespace == NS.sasl else {
            throw failure(action, "expected a SASL <challenge/>, got \(ScansionXML.string(challenge))")
        }
        let response: [UInt8]
        do {
            response = try scram.receiveServerFirst(try Base64.decode(challenge.text))
        } catch {
            throw failure(action, "XMPPFramework would stop answering this challenge: \(error)")
        }
        connections[action.client]!.scram = scram
        connections[action.client]!.client.send(
            "<response xmlns=\"\(NS.sasl)\">\(SASLPayload.encode(response))</response>")
    }

    /// The one element the server sent since the last read: in lockstep
    /// phases anything else before or after the answer is a failure.
    private func nextOnly(_ action: ScansionScript.Action, _ what: String) throws(ScansionFailure) -> Element {
        try readAll(for: action)
        let unread = connections[action.client]!.unread
        guard unread.count == 1, let element = unread[0].element else {
            let got = unread.map(\.raw).joined(separator: "\n            ")
            throw failure(action, "expected \(what) alone, got \(unread.count) unit(s)", received: got)
        }
        connections[action.client]!.unread = []
        return element
    }

    /// An id as XMPPFramework makes them: an uppercase UUID.
    static func xmppFrameworkID() -> String {
        let hex = Crypto.randomBytes(count: 16).map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }
            .joined(separator: "-")
    }
}
