import XMPPCore

/// Changes to a room's configuration (XEP-0045 §10.2): each setting that
/// is not `nil` becomes a field of the `muc#roomconfig` form the owner
/// submits; the others keep the room's current values.
public struct RoomSettings: Sendable, Hashable {
    /// The room's display name.
    public var name: String?
    /// A short description.
    public var description: String?
    /// Whether the room outlives its last occupant.
    public var isPersistent: Bool?
    /// Whether only members may join.
    public var isMembersOnly: Bool?
    /// Whether the room is listed by the service's disco#items.
    public var isPublic: Bool?
    /// The password to join; "" removes it.
    public var password: String?

    /// Settings with the given changes.
    public init(
        name: String? = nil, description: String? = nil, isPersistent: Bool? = nil, isMembersOnly: Bool? = nil,
        isPublic: Bool? = nil, password: String? = nil
    ) {
        self.name = name
        self.description = description
        self.isPersistent = isPersistent
        self.isMembersOnly = isMembersOnly
        self.isPublic = isPublic
        self.password = password
    }

    /// Whether nothing is to change.
    public var isEmpty: Bool { self == RoomSettings() }

    /// The changes as `muc#roomconfig` fields (XEP-0045 §15.5.3), in a
    /// fixed order.
    var fields: [DataForm.Field] {
        func flag(_ value: Bool) -> [String] { [value ? "1" : "0"] }
        var fields: [DataForm.Field] = []
        if let name { fields.append(DataForm.Field("muc#roomconfig_roomname", values: [name])) }
        if let description { fields.append(DataForm.Field("muc#roomconfig_roomdesc", values: [description])) }
        if let isPersistent {
            fields.append(DataForm.Field("muc#roomconfig_persistentroom", type: "boolean", values: flag(isPersistent)))
        }
        if let isMembersOnly {
            fields.append(DataForm.Field("muc#roomconfig_membersonly", type: "boolean", values: flag(isMembersOnly)))
        }
        if let isPublic {
            fields.append(DataForm.Field("muc#roomconfig_publicroom", type: "boolean", values: flag(isPublic)))
        }
        if let password {
            fields.append(
                DataForm.Field("muc#roomconfig_passwordprotectedroom", type: "boolean", values: flag(!password.isEmpty)))
            fields.append(DataForm.Field("muc#roomconfig_roomsecret", type: "text-private", values: [password]))
        }
        return fields
    }

    /// Fields a room's form may lack because another one implies them:
    /// a room with a secret is password-protected (Prosody offers only
    /// the secret).
    static let impliedFields: Set<String> = ["muc#roomconfig_passwordprotectedroom"]

    /// The form to submit for `offered`, the form the room sent: these
    /// changes under the room's FORM_TYPE, less the implied fields it
    /// does not offer.
    /// - Throws: `.invalidRequest` when the room's form has no field for
    ///   one of the changes (it does not support that setting).
    func submission(for offered: DataForm) throws(XMPPClientError) -> DataForm {
        let offeredNames = Set(offered.fields.compactMap(\.name))
        let changes = fields.filter { offeredNames.contains($0.name ?? "") || !Self.impliedFields.contains($0.name ?? "") }
        if let missing = changes.first(where: { !offeredNames.contains($0.name ?? "") }) {
            throw .invalidRequest("the room cannot be configured with \(missing.name ?? "?")")
        }
        let formType = DataForm.Field("FORM_TYPE", type: "hidden", values: [offered.formType ?? NS.mucRoomConfig])
        return DataForm(type: "submit", fields: [formType] + changes)
    }
}
