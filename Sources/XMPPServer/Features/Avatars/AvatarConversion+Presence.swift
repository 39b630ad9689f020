import Synchronization
import XMPPCore
import XMPPStorage

/// XEP-0398 §4 (XEP-0153 on the users' behalf): available presence, broadcast
/// or directed, or sent to a room of the group chat service (whose
/// occupants see it, as they do on Prosody), gets `<x xmlns='vcard-temp:x:update'><photo>HASH</photo></x>`
/// with the SHA-1 hex of the user's vCard photo, unless the client put a
/// `<photo/>` there itself; an `<x/>` without `<photo/>` is replaced (§4:
/// MUST be overwritten). Contacts on clients that know only XEP-0153 (the
/// XMPPFramework apps) thus learn of avatars set through PEP.
///
/// A user whose vCard has no photo gets `<x/>` without `<photo/>` (XEP-0153
/// §4.1: nothing to advertise yet), as Prosody's vcard_legacy does, not an
/// empty `<photo/>`: that would tell every contact the user has no avatar,
/// which is wrong for one published only through PEP before the
/// conversion existed, and clients that read both (aioxmpp) would drop
/// the PEP avatar they show.
///
/// The hash is kept in memory per user with a session (`AvatarHashes`);
/// the first presence of a login that finds none waits, with the session's
/// input, for the vCard to be read.
extension AvatarConversion {
    /// Set while this feature hands a presence down the chain again, so
    /// that it passes its own presence on.
    enum Rerouting: FeatureStateKey {
        static let initialValue = false
    }

    func installPresenceUpdate(_ hooks: Hooks) {
        // First of each chain: the presence is changed before anything
        // else sees it, then handed down the chain again.
        for target in [PresenceTarget.broadcast, .directed] + presenceServices.map(PresenceTarget.service) {
            hooks.onPresence([target], priority: 1000) { routed in self.addPhotoHash(to: routed, target) }
        }
        hooks.onSessionEnded { session in
            guard let jid = session.jid, session.server.sessions.sessions(of: jid.bare).isEmpty else { return }
            self.hashes.forget(jid.localpart!)
        }
    }

    /// Passes presence that needs no hash; for other presence, routes a
    /// copy with the hash instead, once it is known.
    private func addPhotoHash(to routed: RoutedPresence, _ target: PresenceTarget) -> Handling {
        let session = routed.session
        guard !session.state[Rerouting.self], routed.presence.type == .available, let username = session.username,
            routed.presence.element.child("x", namespace: NS.vcardUpdate)?.child("photo", namespace: NS.vcardUpdate)
                == nil
        else { return .passed }
        let server = session.server
        func reroute(_ presence: Presence) {
            session.state[Rerouting.self] = true
            defer { session.state[Rerouting.self] = false }
            let copy = RoutedPresence(presence: presence, sender: routed.sender, recipient: routed.recipient, session: session)
            _ = server.hooks.presence(copy, to: target)
        }
        func route(withHash hash: String) {
            var element = routed.presence.element
            element.removeChildren("x", namespace: NS.vcardUpdate)
            element.append(Self.update(hash))
            reroute(Presence(element) ?? routed.presence)
        }
        if let hash = hashes.hash(of: username) {
            route(withHash: hash)
            return .handled
        }
        session.withStorage({ stores in
            try stores.vCards.vCard(of: username).flatMap(StoredStanza.parse).flatMap(AvatarImage.init(vCard:))?.hash ?? ""
        }) { result in
            guard case .success(let hash) = result else {
                // Unreadable: the presence goes on as the client sent it.
                return reroute(routed.presence)
            }
            hashes.set(hash, of: routed.sender.bare, on: server)
            route(withHash: hash)
        }
        return .handled
    }

    /// `<x xmlns='vcard-temp:x:update'><photo>hash</photo></x>`, or `<x/>`
    /// alone for no photo ("").
    static func update(_ hash: String) -> Element {
        guard !hash.isEmpty else { return Element("x", namespace: NS.vcardUpdate) }
        let photo = Element("photo", namespace: NS.vcardUpdate, children: [.text(hash)])
        return Element("x", namespace: NS.vcardUpdate, children: [.element(photo)])
    }
}

/// The XEP-0153 photo hash of each user who has a session ("" for a user
/// whose vCard has no photo), so that presence does not read the vCard
/// each time. Shared by every loop, so behind a mutex; an entry goes when
/// the user's last session ends.
final class AvatarHashes: Sendable {
    private let hashes = Mutex<[String: String]>([:])

    /// The hash of `username`, or nil when it is not known.
    func hash(of username: String) -> String? {
        hashes.withLock { $0[username] }
    }

    /// Records `hash` for `user` (a bare JID) if the user has a session
    /// on `server`, so that no entry outlives its user's last session.
    func set(_ hash: String, of user: JID, on server: ServerContext) {
        guard let username = user.localpart, !server.sessions.sessions(of: user).isEmpty else { return }
        hashes.withLock { $0[username] = hash }
    }

    /// Forgets the hash of `username`.
    func forget(_ username: String) {
        _ = hashes.withLock { $0.removeValue(forKey: username) }
    }
}
