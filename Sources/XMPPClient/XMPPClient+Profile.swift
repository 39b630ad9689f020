import XMPPCore

extension XMPPClient {
    /// The profile (vCard) of `jid`, or our own when nil; an empty profile
    /// when the user has none.
    public func profile(of jid: JID? = nil) async throws(XMPPClientError) -> Profile {
        let reply = try await request(.get, to: (jid ?? account).bare, payload: Element("vCard", namespace: NS.vcard))
        return reply.payload.map(Profile.init(vCard:)) ?? Profile()
    }

    /// Publishes our profile, replacing the previous one, and announces the
    /// avatar's hash in our presence (XEP-0153) so contacts refresh it.
    public func setProfile(_ profile: Profile) async throws(XMPPClientError) {
        _ = try await request(.set, payload: profile.vCard)
        ownAvatarHash = profile.avatar?.hash ?? ""
        if ownPresence.type != .unavailable { send(presenceWithAvatarHash(ownPresence).element) }
    }

    /// `presence` with our avatar hash, once known (XEP-0153 §4.2: an empty
    /// `<photo/>` says "no avatar").
    func presenceWithAvatarHash(_ presence: Presence) -> Presence {
        guard let ownAvatarHash else { return presence }
        var stamped = presence
        stamped.element.removeChildren("x", namespace: NS.vcardUpdate)
        var photo = Element("photo", namespace: NS.vcardUpdate)
        if !ownAvatarHash.isEmpty { photo.append(text: ownAvatarHash) }
        stamped.element.append(Element("x", namespace: NS.vcardUpdate, children: [.element(photo)]))
        return stamped
    }

    /// Learns our avatar hash from our vCard, as XMPPFramework does after
    /// login; a server without vCards leaves it unknown.
    func loadOwnAvatarHash() async {
        guard ownAvatarHash == nil else { return }
        if let profile = try? await profile() { ownAvatarHash = profile.avatar?.hash ?? "" }
    }
}
