import XMPPCore

/// Service discovery of the group chat service and its rooms (XEP-0045
/// §6): what the service is, which rooms exist, and what a room is like.
extension MultiUserChat {
    /// The name in disco.
    static let name = "Chatrooms"

    /// The room features (§6.4, §15.3) every room has: temporary, open,
    /// unmoderated, semi-anonymous, public (listed) and without password.
    static let roomFeatures = [
        NS.discoInfo, NS.muc, "muc_temporary", "muc_open", "muc_unmoderated", "muc_semianonymous", "muc_public",
        "muc_unsecured",
    ]

    /// disco#info of the service (§6.1): a text conference service.
    @Sendable static func serviceInfo(_ request: IQRequest) throws -> IQAnswer {
        var query = try DiscoAnswer.query(request)
        query.append(DiscoAnswer.identity(category: "conference", type: "text", name: name))
        return .result(DiscoAnswer.adding([NS.discoInfo, NS.discoItems, NS.muc], to: query))
    }

    /// disco#items of the service (§6.3): the rooms, all public for now.
    func roomList(_ request: IQRequest) throws -> IQAnswer {
        var query = try DiscoAnswer.query(request)
        for room in rooms.roomAddresses {
            query.append(
                Element(
                    "item", namespace: NS.discoItems,
                    attributes: ["jid": room.description, "name": room.localpart ?? ""]))
        }
        return .result(query)
    }

    /// disco#info of a room (§6.4), or disco#items, which lists no
    /// occupants (§6.5: a semi-anonymous room keeps them to itself).
    func roomQuery(_ request: IQRequest, room: MUCRoom) throws -> IQAnswer {
        var query = try DiscoAnswer.query(request)
        guard query.namespace == NS.discoInfo else { return .result(query) }
        query.append(DiscoAnswer.identity(category: "conference", type: "text", name: room.jid.localpart))
        return .result(DiscoAnswer.adding(Self.roomFeatures + room.archiveFeatures, to: query))
    }
}
