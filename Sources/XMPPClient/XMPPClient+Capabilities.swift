import XMPPCore

/// XEP-0115 Entity Capabilities of the client kit: its disco#info (XEP-0030),
/// announced in available presence by a hash and answered to whoever asks.
/// The server's PEP service reads it (XEP-0163 §4.2) to send only the
/// notifications we want: contacts' avatar metadata (XEP-0084) and our own
/// room bookmarks (XEP-0402).
extension XMPPClient {
    /// The URI naming this software in `<c/>` (the project has no website;
    /// `.invalid` keeps the name from claiming anyone's domain).
    static let capsNode = "https://swiftlet.invalid/xmppclient"

    /// What the client kit is and supports, as disco#info says it.
    static let discoInfo: Element = {
        var query = Element("query", namespace: NS.discoInfo)
        query.append(
            Element(
                "identity", namespace: NS.discoInfo, attributes: ["category": "client", "type": "pc", "name": "Swiftlet"]))
        for feature in [
            NS.caps, NS.discoInfo, NS.ping, NS.avatarMetadata + "+notify", NS.muc, NS.conferenceInvitation,
            NS.bookmarks + "+notify",
        ] {
            query.append(Element("feature", namespace: NS.discoInfo, attributes: ["var": feature]))
        }
        return query
    }()

    /// Our capabilities: `discoInfo` hashed with SHA-1 (XEP-0115 §5).
    static let capabilities = EntityCapabilities(
        hash: HashFunction.sha1.rawValue, node: capsNode, ver: EntityCapabilities.ver(of: discoInfo, using: .sha1)!)

    /// Answers a disco#info query to our full JID, about us or about our
    /// capabilities' `node#ver` (XEP-0115 §6.2); another node does not
    /// exist.
    func answerDiscoInfo(_ iq: IQ) {
        let node = iq.payload?[attribute: "node"]
        guard node == nil || node == Self.capabilities.discoNode else {
            if let reply = iq.errorReply(StanzaError(.itemNotFound)) { send(reply) }
            return
        }
        var query = Self.discoInfo
        query[attribute: "node"] = node
        send(iq.result(payload: query))
    }
}
