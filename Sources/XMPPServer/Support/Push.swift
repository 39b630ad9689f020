import XMPPCore

extension ServerContext {
    /// Sends an IQ set carrying `payload` to each resource of `user` that
    /// `isInterested` accepts, addressed to its full JID, with a fresh id:
    /// roster pushes (RFC 6121 §2.1.6), blocklist pushes (XEP-0191 §3.3).
    /// The client's answer is not awaited (the router drops it).
    func push(_ payload: Element, to user: JID, if isInterested: @escaping @Sendable (ClientSession) -> Bool) {
        for handle in sessions.sessions(of: user) {
            handle.withSession { session in
                guard isInterested(session), let jid = session.jid else { return }
                var push = Element(
                    "iq", namespace: NS.client,
                    attributes: ["type": "set", "id": "push-" + Base64.encode(Crypto.randomBytes(count: 6)),
                                 "to": jid.description])
                push.append(payload)
                session.send(push)
            }
        }
    }
}
