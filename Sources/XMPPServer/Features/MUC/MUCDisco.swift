import XMPPCore

/// Service discovery of the group chat service and its rooms (XEP-0045
/// §6): what the service is, which rooms it lists, and what a room is
/// like.
extension MultiUserChat {
    /// The name in disco.
    static let name = "Chatrooms"

    /// disco#info of the service (§6.1): a text conference service.
    @Sendable static func serviceInfo(_ request: IQRequest) throws -> IQAnswer {
        var query = try DiscoAnswer.query(request)
        query.append(DiscoAnswer.identity(category: "conference", type: "text", name: name))
        return .result(DiscoAnswer.adding([NS.discoInfo, NS.discoItems, NS.muc], to: query))
    }

    /// disco#items of the service (§6.3): the public rooms.
    func roomList(_ request: IQRequest) throws -> IQAnswer {
        var query = try DiscoAnswer.query(request)
        for room in rooms.publicRooms {
            query.append(
                Element("item", namespace: NS.discoItems, attributes: ["jid": room.jid.description, "name": room.name]))
        }
        return .result(query)
    }

    /// disco#info of a room (§6.4) with its `muc#roominfo` form, or of
    /// its `x-roomuser-item` node (§7.10.1: the nickname `sender`
    /// registered); disco#items, which lists no occupants (§6.5: rooms
    /// keep them to themselves).
    func roomQuery(_ request: IQRequest, room: borrowing MUCRoom, sender: JID) throws(StanzaError) -> Element {
        let payload = request.iq.payload!
        if payload.namespace == NS.discoInfo, payload[attribute: "node"] == "x-roomuser-item" {
            var query = Element("query", namespace: NS.discoInfo, attributes: ["node": "x-roomuser-item"])
            if let nick = room.registeredNick(of: sender) {
                query.append(DiscoAnswer.identity(category: "conference", type: "text", name: nick))
            }
            return query
        }
        var query = try DiscoAnswer.query(request)
        guard query.namespace == NS.discoInfo else { return query }
        let configuration = room.configuration
        query.append(
            DiscoAnswer.identity(
                category: "conference", type: "text",
                name: configuration.name.isEmpty ? room.jid.localpart : configuration.name))
        query = DiscoAnswer.adding(
            [NS.discoInfo, NS.muc, NS.register] + configuration.discoFeatures + room.archiveFeatures, to: query)
        query.append(Self.roomInfo(room).element)
        return query
    }

    /// The `muc#roominfo` form of disco#info (§6.4, §15.5.4).
    private static func roomInfo(_ room: borrowing MUCRoom) -> DataForm {
        typealias Field = DataForm.Field
        let configuration = room.configuration
        let subject = room.subject?.child("subject", namespace: NS.client)?.text ?? ""
        return DataForm(
            type: "result",
            fields: [
                Field("FORM_TYPE", type: "hidden", values: [NS.mucRoomInfo]),
                Field("muc#roomconfig_roomname", type: "text-single", label: "Name", values: [configuration.name]),
                Field("muc#roominfo_description", type: "text-single", label: "Description", values: [configuration.description]),
                Field("muc#roominfo_subject", type: "text-single", label: "Subject", values: [subject]),
                Field("muc#roominfo_occupants", type: "text-single", label: "Occupants", values: [String(room.occupants.count)]),
                .boolean("muc#roomconfig_changesubject", label: "Participants may change the subject", configuration.occupantsMayChangeSubject),
                Field("muc#maxhistoryfetch", type: "text-single", label: "Messages newcomers get", values: [String(configuration.historyLength)]),
            ])
    }
}
