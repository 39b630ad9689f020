import XMPPCore

/// XEP-0084 User Avatar over the server's PEP service (XEP-0163): our
/// avatar published beside the vCard's, and contacts' metadata
/// notifications read as their avatar hashes.
extension XMPPClient {
    /// Whether our account is a PEP service: its disco#info has the
    /// `pubsub/pep` identity (XEP-0163 §6.1).
    func accountSupportsPEP() async -> Bool {
        guard let reply = try? await request(.get, to: account.bare, payload: Element("query", namespace: NS.discoInfo)),
            let query = reply.payload
        else { return false }
        return query.elements.contains {
            $0.name == "identity" && $0[attribute: "category"] == "pubsub" && $0[attribute: "type"] == "pep"
        }
    }

    /// Publishes `avatar` (XEP-0084 §4.1, §4.2): the image to the data
    /// node, then its metadata, both under the SHA-1 of the image as the
    /// item id.
    func publishAvatar(_ avatar: Profile.Avatar) async throws(XMPPClientError) {
        let id = avatar.hash
        try await publish(Element("data", namespace: NS.avatarData, children: [.text(Base64.encode(avatar.data))]), to: NS.avatarData, id: id)
        let info = Element(
            "info", namespace: NS.avatarMetadata,
            attributes: ["id": id, "bytes": String(avatar.data.count), "type": avatar.type])
        try await publish(Element("metadata", namespace: NS.avatarMetadata, children: [.element(info)]), to: NS.avatarMetadata, id: id)
    }

    /// Publishes one item to a node of our PEP service (XEP-0060 §7.1).
    private func publish(_ payload: Element, to node: String, id: String) async throws(XMPPClientError) {
        let item = Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(payload)])
        let publish = Element("publish", namespace: NS.pubsub, attributes: ["node": node], children: [.element(item)])
        _ = try await request(.set, payload: Element("pubsub", namespace: NS.pubsub, children: [.element(publish)]))
    }

    /// Takes a contact's avatar metadata notification (XEP-0084 §4.3):
    /// the id of its first `<info/>` becomes the avatar hash of the
    /// contact's presences, as a XEP-0153 hash would (no `<info/>`: no
    /// avatar, §4.5). Returns whether `message` was one.
    func handleAvatarMetadata(_ message: Message) -> Bool {
        guard let items = message.element.child("event", namespace: NS.pubsubEvent)?.child("items", namespace: NS.pubsubEvent),
            items[attribute: "node"] == NS.avatarMetadata
        else { return false }
        // From a contact's PEP service: its bare JID, never our own.
        guard let from = message.from, from.isBare, from != account.bare,
            let metadata = items.child("item", namespace: NS.pubsubEvent)?.child("metadata", namespace: NS.avatarMetadata)
        else { return true }
        let hash = metadata.child("info", namespace: NS.avatarMetadata)?[attribute: "id"] ?? ""
        avatarHashes[from] = hash
        for var presence in presences[from]?.values ?? [:].values where presence.avatarHash != hash {
            presence.avatarHash = hash
            presences[from]?[presence.jid] = presence
            broadcaster.publish(.presence(presence))
        }
        return true
    }
}
