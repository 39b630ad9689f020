import Synchronization
import XMPPCore

/// XEP-0421 occupant ids: `<occupant-id xmlns='urn:xmpp:occupant-id:0'
/// id/>` on every presence and message (groupchat or private) a room
/// sends from an occupant, the same for one user in one room whatever its nickname or
/// resource, and different in every other room.
///
/// An id is an HMAC of the room's and the user's bare JIDs under a key
/// derived from the server's stored secret: stable across restarts (the
/// room's archive keeps them), and telling nothing of the user's JID to
/// anyone without the secret.
///
/// Shared by every loop; the key is set once, at start.
final class MUCOccupantIDs: Sendable {
    private let key = Mutex<[UInt8]?>(nil)

    /// Derives the key from the server's secret.
    func configure(secret: [UInt8]) {
        let derived = HashFunction.sha256.hmac(key: secret, message: Array("swiftlet occupant ids".utf8))
        key.withLock { $0 = Array(derived) }
    }

    /// The id of `user` (its bare JID counts) in the room `room`.
    func id(of user: JID, in room: JID) -> String {
        guard let key = key.withLock({ $0 }) else { preconditionFailure("occupant ids used before the server started") }
        let message = Array(room.bare.description.utf8) + [0] + Array(user.bare.description.utf8)
        return Base64.encode(HashFunction.sha256.hmac(key: key, message: message).prefix(18))
    }
}

extension MUCRoom {
    /// `<occupant-id/>` of `occupant` in this room.
    func occupantIDElement(of occupant: MUCOccupant) -> Element {
        Element("occupant-id", namespace: NS.occupantID, attributes: ["id": occupantIDs.id(of: occupant.user, in: jid)])
    }
}

extension Element {
    /// This stanza without the occupant ids a client put in: only the room
    /// gives them (XEP-0421 §4).
    var withoutOccupantIDs: Element {
        var element = self
        element.removeChildren("occupant-id", namespace: NS.occupantID)
        return element
    }
}
