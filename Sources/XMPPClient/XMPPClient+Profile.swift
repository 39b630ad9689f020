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
    /// When our account is a PEP service, an avatar is also published as
    /// a XEP-0084 User Avatar, which clients without vCard avatars read.
    public func setProfile(_ profile: Profile) async throws(XMPPClientError) {
        _ = try await request(.set, payload: profile.vCard)
        ownAvatarHash = profile.avatar?.hash ?? ""
        if ownPresence.type != .unavailable { send(stamped(ownPresence).element) }
        if let avatar = profile.avatar, await accountSupportsPEP() { try await publishAvatar(avatar) }
    }

    /// `presence` as we send it: with our avatar hash, once known
    /// (XEP-0153 §4.2: an empty `<photo/>` says "no avatar"), and, when
    /// available, our capabilities (XEP-0115 §4).
    func stamped(_ presence: Presence) -> Presence {
        var stamped = presence
        if presence.type == .available {
            stamped.element.removeChildren("c", namespace: NS.caps)
            stamped.element.append(Self.capabilities.element)
        }
        guard let ownAvatarHash else { return stamped }
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
