import XMPPCore

extension XMPPClient {
    /// The JIDs we block (XEP-0191), as the server keeps them.
    public func blocklist() async throws(XMPPClientError) -> [JID] {
        let reply = try await request(.get, payload: Element("blocklist", namespace: NS.blocking))
        return (reply.payload?.elements ?? []).compactMap { $0[attribute: "jid"].flatMap { try? JID($0) } }
    }

    /// Blocks `jid`: the server drops what it sends us and shows us to it
    /// as offline (XEP-0191 §3.3).
    public func block(_ jid: JID) async throws(XMPPClientError) {
        try await changeBlocklist("block", [jid])
    }

    /// Unblocks `jid`, or everyone when `jid` is nil.
    public func unblock(_ jid: JID?) async throws(XMPPClientError) {
        try await changeBlocklist("unblock", jid.map { [$0] } ?? [])
    }

    private func changeBlocklist(_ action: String, _ jids: [JID]) async throws(XMPPClientError) {
        var command = Element(action, namespace: NS.blocking)
        for jid in jids {
            command.append(Element("item", namespace: NS.blocking, attributes: ["jid": jid.description]))
        }
        _ = try await request(.set, payload: command)
    }

    /// Tells the server whether the user is looking at the app (XEP-0352):
    /// while inactive, contacts' presence changes are held back and sent
    /// together with the next message, saving a phone's radio. A server
    /// without client state indication is not told.
    public func setActive(_ active: Bool) {
        guard connection?.features.child("csi", namespace: NS.csi) != nil else { return }
        send(Element(active ? "active" : "inactive", namespace: NS.csi))
    }
}
