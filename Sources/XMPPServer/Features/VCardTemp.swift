import XMPPCore
import XMPPStorage

/// XEP-0054: vcard-temp. A user sets their own vCard (an IQ set with no
/// `to`, or to their own bare JID); anyone on the server gets a user's
/// vCard from that user's bare JID, and the answer comes from the bare JID
/// (RFC 6120 §10.3.3: the server answers on the account's behalf).
///
/// | request                          | answer                                      |
/// |----------------------------------|---------------------------------------------|
/// | get, own account or another user | the stored vCard, or an empty `<vCard/>` (§3.1: a user without one) |
/// | get, no such account             | `service-unavailable` (RFC 6121 §8.5.1)      |
/// | get, from someone the user blocks | `service-unavailable` (XEP-0191 §3.3)      |
/// | set, own account                 | stored, empty result; over `vcard_max_size`: `policy-violation` |
/// | set, another user's bare JID     | `forbidden`                                 |
///
/// Fires `VCardStored` once a set is stored; `AvatarConversion` keeps the
/// XEP-0153 photo hash and the XEP-0084 avatar in step with it.
public struct VCardTemp: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.vcard)
        hooks.advertiseOnAccount(NS.vcard)
        hooks.onIQ(.get, NS.vcard, "vCard", to: [.account, .user], Self.get)
        hooks.onIQ(.set, NS.vcard, "vCard", to: [.account], Self.set)
        hooks.onIQ(.set, NS.vcard, "vCard", to: [.user]) { _ in
            throw StanzaError(.forbidden, text: "you can only set your own vCard")
        }
    }

    @Sendable private static func get(_ request: IQRequest) throws -> IQAnswer {
        guard let username = request.target.localpart, let requester = request.session.jid else {
            throw StanzaError(.serviceUnavailable)
        }
        return vCard(of: username, for: requester)
    }

    /// The answer to `requester`'s get of `username`'s vCard: the stored
    /// one (only its children named in `keeping`, when given), an empty
    /// one, or `service-unavailable` for no such account or one that
    /// blocks the requester.
    static func vCard(of username: String, for requester: JID, keeping: Set<String>? = nil) -> IQAnswer {
        .afterStorage({ stores in
            // No such account, or it blocks the requester (XEP-0191 §3.3).
            guard try stores.reaches(username, from: requester) else { throw StanzaError(.serviceUnavailable) }
            return try stores.vCards.vCard(of: username)
        }) { xml in
            guard let xml else { return .result(Element("vCard", namespace: NS.vcard)) }
            guard var vCard = StoredStanza.parse(xml) else {
                throw DamagedRecord(description: "the stored vCard of \(username) does not parse")
            }
            if let keeping { vCard.children = vCard.elements.filter { keeping.contains($0.name) }.map { .element($0) } }
            return .result(vCard)
        }
    }

    @Sendable private static func set(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let limit = request.server.config.limits.maxVCardSize
        guard let xml = StoredStanza.serialize(request.iq.payload!) else {
            throw StanzaError(.badRequest, text: "the vCard cannot be stored")
        }
        guard xml.utf8.count <= limit else {
            throw StanzaError(.policyViolation, text: "a vCard may have at most \(limit) bytes")
        }
        let vCard = request.iq.payload!
        let session = request.session
        return .afterStorage({ stores in
            try stores.inTransaction {
                let previous = try stores.vCards.vCard(of: username)
                try stores.vCards.setVCard(xml, of: username)
                return previous
            }
        }) { previous in
            .result {
                guard let owner = session.jid?.bare else { return }
                session.server.hooks.fire(VCardStored(owner: owner, vCard: vCard, previousXML: previous, session: session))
            }
        }
    }
}

/// A user's vCard was replaced by the user's own set (XEP-0054 §3.2), and
/// the set answered.
public struct VCardStored: ServerEvent {
    /// The user's bare JID.
    public let owner: JID
    /// The vCard as stored.
    public let vCard: Element
    /// The vCard it replaced, serialized, if there was one.
    public let previousXML: String?
    /// The user's session that set it.
    public let session: ClientSession
}
