import XMPPCore

/// A room's settings (XEP-0045 §10.2), which its owners change with the
/// `muc#roomconfig` form. A new room starts with `init(limits:)`'s
/// defaults: temporary, public, open, unmoderated, semi-anonymous.
struct MUCRoomConfiguration: Sendable, Equatable, Codable {
    /// Who sees occupants' real JIDs (`muc#roomconfig_whois`).
    enum Whois: String, Sendable, Codable, CaseIterable {
        case moderators, anyone
    }

    /// Who may send private messages through the room
    /// (`muc#roomconfig_allowpm`).
    enum PrivateMessages: String, Sendable, Codable, CaseIterable {
        case anyone, participants, moderators, none
    }

    /// The room's name for people (`muc#roomconfig_roomname`).
    var name = ""
    /// What the room is about (`muc#roomconfig_roomdesc`).
    var description = ""
    /// Whether the room stays when the last occupant leaves, and across
    /// restarts (`muc#roomconfig_persistentroom`).
    var persistent = false
    /// Whether the service lists the room (`muc#roomconfig_publicroom`).
    var isPublic = true
    /// Whether only members may enter (`muc#roomconfig_membersonly`).
    var membersOnly = false
    /// The password entering takes, empty for none
    /// (`muc#roomconfig_roomsecret`). Occupants share it, so the room
    /// must keep it as it is to compare it.
    var password = ""
    /// Whether only participants and moderators may speak: newcomers
    /// without affiliation are visitors (`muc#roomconfig_moderatedroom`).
    var moderated = false
    /// The most occupants at once (`muc#roomconfig_maxusers`), at most
    /// `muc_max_occupants`.
    var maxUsers: Int
    var whois = Whois.moderators
    /// Whether participants, not only moderators, may change the subject
    /// (`muc#roomconfig_changesubject`).
    var occupantsMayChangeSubject = false
    /// Whether occupants may invite others; in a members-only room,
    /// whether members may, not only admins (`muc#roomconfig_allowinvites`).
    var occupantsMayInvite = false
    var privateMessages = PrivateMessages.anyone
    /// The roles whose occupants' presence everyone gets
    /// (`muc#roomconfig_presencebroadcast`); `none` also shows newcomers
    /// the members who have registered a nickname and are not in.
    var presenceBroadcast: Set<MUCRole> = [.visitor, .participant, .moderator]
    /// How many messages a newcomer gets at most (`muc#maxhistoryfetch`),
    /// at most `muc_history_length`.
    var historyLength: Int
    /// Whether the room keeps an archive of its messages
    /// (`muc#roomconfig_enablearchiving`, XEP-0313).
    var archived = true

    /// A new room's settings within the service's limits.
    init(maxUsers: Int, historyLength: Int) {
        self.maxUsers = maxUsers
        self.historyLength = historyLength
    }

    /// Whether everyone sees real JIDs (status 100 and 172, §4.2).
    var isNonAnonymous: Bool { whois == .anyone }

    /// Reads stored settings; a setting they lack (stored by an earlier
    /// version) takes its default, so that a stored room always comes back.
    init(from decoder: any Decoder) throws {
        let stored = try decoder.container(keyedBy: CodingKeys.self)
        func value<Value: Decodable>(_ key: CodingKeys, or fallback: Value) throws -> Value {
            try stored.decodeIfPresent(Value.self, forKey: key) ?? fallback
        }
        let defaults = ServerConfig.MUC()
        self.init(
            maxUsers: try value(.maxUsers, or: defaults.maxOccupants),
            historyLength: try value(.historyLength, or: defaults.historyLength))
        name = try value(.name, or: name)
        description = try value(.description, or: description)
        persistent = try value(.persistent, or: persistent)
        isPublic = try value(.isPublic, or: isPublic)
        membersOnly = try value(.membersOnly, or: membersOnly)
        password = try value(.password, or: password)
        moderated = try value(.moderated, or: moderated)
        whois = try value(.whois, or: whois)
        occupantsMayChangeSubject = try value(.occupantsMayChangeSubject, or: occupantsMayChangeSubject)
        occupantsMayInvite = try value(.occupantsMayInvite, or: occupantsMayInvite)
        privateMessages = try value(.privateMessages, or: privateMessages)
        presenceBroadcast = try value(.presenceBroadcast, or: presenceBroadcast)
        archived = try value(.archived, or: archived)
    }
}

// MARK: - The form

extension MUCRoomConfiguration {
    /// The `muc#roomconfig` form showing these settings (§10.2), with
    /// `maxUsers` and `historyLength` bounded by the service's limits.
    func form(room: JID, maxUsersLimit: Int, historyLimit: Int) -> DataForm {
        typealias Field = DataForm.Field
        let privateMessageLabels: [PrivateMessages: String] = [
            .anyone: "Anyone", .participants: "Participants and moderators", .moderators: "Moderators", .none: "No one",
        ]
        return DataForm(
            type: "form",
            fields: [
                Field("FORM_TYPE", type: "hidden", values: [NS.mucRoomConfig]),
                Field("muc#roomconfig_roomname", type: "text-single", label: "Name", values: [name]),
                Field("muc#roomconfig_roomdesc", type: "text-single", label: "Description", values: [description]),
                .boolean("muc#roomconfig_persistentroom", label: "Keep the room when it is empty", persistent),
                .boolean("muc#roomconfig_publicroom", label: "List the room publicly", isPublic),
                .boolean("muc#roomconfig_membersonly", label: "Only members may enter", membersOnly),
                .boolean("muc#roomconfig_passwordprotectedroom", label: "Entering takes a password", !password.isEmpty),
                Field("muc#roomconfig_roomsecret", type: "text-private", label: "Password", values: [password]),
                .boolean("muc#roomconfig_moderatedroom", label: "Only participants may speak", moderated),
                // A list (XEP-0045 §15.5.3): the usual sizes up to the
                // service's limit, and the room's own; any number is taken.
                .listSingle(
                    "muc#roomconfig_maxusers", label: "Most occupants at once", String(maxUsers),
                    options: Set([10, 20, 30, 50, 100, maxUsersLimit, maxUsers].filter { $0 <= maxUsersLimit })
                        .sorted().map { (String($0), String($0)) }),
                .listSingle(
                    "muc#roomconfig_whois", label: "Who sees occupants' real addresses", whois.rawValue,
                    options: [("moderators", "Moderators"), ("anyone", "Anyone")]),
                .boolean(
                    "muc#roomconfig_changesubject", label: "Participants may change the subject",
                    occupantsMayChangeSubject),
                .boolean("muc#roomconfig_allowinvites", label: "Occupants may invite others", occupantsMayInvite),
                .listSingle(
                    "muc#roomconfig_allowpm", label: "Who may send private messages", privateMessages.rawValue,
                    options: PrivateMessages.allCases.map { ($0.rawValue, privateMessageLabels[$0]!) }),
                Field(
                    "muc#maxhistoryfetch", type: "text-single",
                    label: "Messages newcomers get (at most \(historyLimit))", values: [String(historyLength)]),
                .boolean("muc#roomconfig_enablearchiving", label: "Keep an archive of messages", archived),
                .listMulti(
                    "muc#roomconfig_presencebroadcast",
                    label: "Whose presence everyone gets, by role (none: members not in the room)",
                    MUCRole.allCases.filter(presenceBroadcast.contains).map(\.rawValue),
                    options: MUCRole.allCases.map { ($0.rawValue, $0.rawValue) }),
            ])
    }

    /// These settings with the submitted `form` applied (§10.2.1): a
    /// field left out stays as it is; an unknown field is ignored, as
    /// forms of other services may carry theirs.
    ///
    /// - Throws: `bad-request` for a form of another FORM_TYPE or a
    ///   malformed value, `not-acceptable` for a number beyond the
    ///   service's limits.
    func applying(_ form: DataForm, maxUsersLimit: Int, historyLimit: Int) throws(StanzaError) -> Self {
        if let formType = form.formType, formType != NS.mucRoomConfig {
            throw StanzaError(.badRequest, text: "the form's FORM_TYPE must be \(NS.mucRoomConfig)")
        }
        var changed = self
        var passwordProtected: Bool?
        for field in form.fields {
            guard let name = field.name else { continue }
            let value = field.values.first ?? ""
            func boolean() throws(StanzaError) -> Bool {
                guard let boolean = DataForm.Field.booleanValue(value) else {
                    throw StanzaError(.badRequest, text: "\(name) must be a boolean")
                }
                return boolean
            }
            func number(limit: Int) throws(StanzaError) -> Int {
                guard let number = Int(value), number >= 0 else {
                    throw StanzaError(.badRequest, text: "\(name) must be a number")
                }
                guard number <= limit else {
                    throw StanzaError(.notAcceptable, type: .modify, text: "\(name) may be at most \(limit)")
                }
                return number
            }
            func choice<Choice: RawRepresentable<String>>(_: Choice.Type) throws(StanzaError) -> Choice {
                guard let choice = Choice(rawValue: value) else {
                    throw StanzaError(.badRequest, text: "\(name) does not offer '\(value)'")
                }
                return choice
            }
            switch name {
            case "muc#roomconfig_roomname": changed.name = value
            case "muc#roomconfig_roomdesc": changed.description = value
            case "muc#roomconfig_persistentroom": changed.persistent = try boolean()
            case "muc#roomconfig_publicroom": changed.isPublic = try boolean()
            case "muc#roomconfig_membersonly": changed.membersOnly = try boolean()
            case "muc#roomconfig_passwordprotectedroom": passwordProtected = try boolean()
            case "muc#roomconfig_roomsecret": changed.password = value
            case "muc#roomconfig_moderatedroom": changed.moderated = try boolean()
            case "muc#roomconfig_maxusers":
                // `none` (no limit) is the service's limit.
                changed.maxUsers = value == "none" || value.isEmpty ? maxUsersLimit : try number(limit: maxUsersLimit)
                if changed.maxUsers == 0 { changed.maxUsers = maxUsersLimit }
            case "muc#roomconfig_whois": changed.whois = try choice(Whois.self)
            case "muc#roomconfig_changesubject": changed.occupantsMayChangeSubject = try boolean()
            case "muc#roomconfig_allowinvites": changed.occupantsMayInvite = try boolean()
            case "muc#roomconfig_allowpm": changed.privateMessages = try choice(PrivateMessages.self)
            case "muc#maxhistoryfetch", "muc#roomconfig_historylength":
                changed.historyLength = try number(limit: historyLimit)
            case "muc#roomconfig_enablearchiving": changed.archived = try boolean()
            case "muc#roomconfig_presencebroadcast":
                var roles: Set<MUCRole> = []
                for value in field.values {
                    guard let role = MUCRole(rawValue: value) else {
                        throw StanzaError(.badRequest, text: "\(name) does not offer '\(value)'")
                    }
                    roles.insert(role)
                }
                changed.presenceBroadcast = roles
            default: continue
            }
        }
        if passwordProtected == false { changed.password = "" }
        return changed
    }

    /// The status codes occupants get when the settings change from
    /// `old` to these (§10.2.1: 104, and 172/173 when who sees real JIDs
    /// changes, 170/171 when archiving starts or stops); empty when
    /// nothing changed.
    func statusCodes(changedFrom old: Self) -> [MUCRoom.Status] {
        guard self != old else { return [] }
        var codes: [MUCRoom.Status] = [.configurationChanged]
        if whois != old.whois { codes.append(isNonAnonymous ? .nowNonAnonymous : .nowSemiAnonymous) }
        if archived != old.archived { codes.append(archived ? .archivingOn : .archivingOff) }
        return codes
    }

    /// The room features of disco#info (§6.4, §15.3) these settings give.
    var discoFeatures: [String] {
        [
            persistent ? "muc_persistent" : "muc_temporary",
            isPublic ? "muc_public" : "muc_hidden",
            membersOnly ? "muc_membersonly" : "muc_open",
            password.isEmpty ? "muc_unsecured" : "muc_passwordprotected",
            moderated ? "muc_moderated" : "muc_unmoderated",
            isNonAnonymous ? "muc_nonanonymous" : "muc_semianonymous",
        ]
    }
}
