import XMPPCore

extension XMPPClient {
    /// Creates the account `username` at the configured server with
    /// `password` (XEP-0077 in-band registration), on a stream of its own
    /// that is closed afterwards; then ``connect()`` can log in.
    /// - Throws: `.registrationConflict` when the name is taken,
    ///   `.registrationNotAllowed` when the server refuses, and the
    ///   connection errors of ``connect()``.
    public func register(username: String, password: String) async throws(XMPPClientError) {
        let transport = try await openTransport()
        transport.setReadTimeout(configuration.timeout)
        defer { transport.close() }
        var negotiator = StreamNegotiator(transport: transport, account: account)
        var features = try await negotiator.openStream()
        features = try await negotiator.secure(
            features, trust: configuration.tlsContext(), required: configuration.requireTLS)
        try await negotiator.register(username: username, password: password)
    }

    /// Changes the account's password (XEP-0077 §3.3); later reconnects use
    /// the new one, and ``savedLogin`` is cleared until the next login.
    public func changePassword(to newPassword: String) async throws(XMPPClientError) {
        var query = Element("query", namespace: NS.register)
        query.append(Element("username", namespace: NS.register, children: [.text(account.localpart ?? "")]))
        query.append(Element("password", namespace: NS.register, children: [.text(newPassword)]))
        _ = try await request(.set, to: try? JID(localpart: nil, domainpart: account.domainpart), payload: query)
        secret = .password(newPassword)
        savedLogin = nil
        // The next login derives keys from the new password, not a token.
        fastToken = nil
    }

    /// Deletes the account on the server (XEP-0077 §3.2) and disconnects
    /// for good.
    public func deleteAccount() async throws(XMPPClientError) {
        var query = Element("query", namespace: NS.register)
        query.append(Element("remove", namespace: NS.register))
        // The server may end the stream as soon as the account is gone:
        // that is no reason to reconnect.
        let wanted = wantsConnection
        wantsConnection = false
        do {
            _ = try await request(.set, to: try? JID(localpart: nil, domainpart: account.domainpart), payload: query)
        } catch {
            wantsConnection = wanted && connection != nil
            throw error
        }
        savedLogin = nil
        await disconnect()
    }
}
