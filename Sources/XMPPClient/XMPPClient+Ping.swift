import XMPPCore

extension XMPPClient {
    /// Pings the server and waits for its answer (XEP-0199 §4.2).
    ///
    /// The server handles a session's stanzas in order, so when this
    /// returns, everything sent before has been handled and any error it
    /// caused (a bounced message, as a `.messageFailed` event) has arrived.
    /// - Throws: `.notConnected`, `.timedOut`, or `.stanzaError` from a
    ///   server that does not answer pings.
    public func ping() async throws(XMPPClientError) {
        _ = try await request(.get, payload: Element("ping", namespace: NS.ping))
    }
}
