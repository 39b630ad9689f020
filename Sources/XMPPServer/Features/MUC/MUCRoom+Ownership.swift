import XMPPCore

/// An owner's configuration of a room, and its end (XEP-0045 §10.1,
/// §10.2, §10.9).
extension MUCRoom {
    /// The service's bounds on what a configuration may ask for.
    struct ConfigurationLimits: Sendable {
        /// `muc_max_occupants`.
        var maxUsers: Int
        /// `muc_history_length`.
        var historyLength: Int
    }

    /// Throws `forbidden` unless `requester` owns the room (§10).
    func checkOwner(_ requester: JID) throws(StanzaError) {
        guard affiliation(of: requester) == .owner else {
            throw StanzaError(.forbidden, type: .auth, text: "only owners may configure or destroy a room")
        }
    }

    /// Applies `form`, which an owner submitted (§10.2), and unlocks the
    /// room; a form with no field but FORM_TYPE keeps the settings (an
    /// instant room, §10.1.2). When the room became members-only,
    /// occupants who are not members leave it with 322 (§9.4): those
    /// presences are returned. Occupants get the status codes of what
    /// changed (104, 172/173, 170/171) in a groupchat message, which is
    /// put in `notices`, to be sent after the owner's answer.
    ///
    /// - Throws: what `MUCRoomConfiguration.applying` throws.
    mutating func configure(
        with form: DataForm, limits: ConfigurationLimits, notices: inout [MUCDelivery]
    ) throws(StanzaError) -> [MUCDelivery] {
        let old = configuration
        configuration = try old.applying(form, maxUsersLimit: limits.maxUsers, historyLimit: limits.historyLength)
        isLocked = false
        revision += 1
        if configuration.historyLength != history.capacity {
            history = history.resized(to: configuration.historyLength)
        }
        var out: [MUCDelivery] = []
        if configuration.membersOnly, !old.membersOnly {
            for occupant in occupants.values where occupant.affiliation < .member {
                out += remove(occupant.nick, note: PresenceNote(statuses: [.membersOnlyNow]))
            }
        }
        let codes = configuration.statusCodes(changedFrom: old)
        guard !codes.isEmpty else { return out }
        var x = Element("x", namespace: NS.mucUser)
        for code in codes { x.append(code.element) }
        let message = Element(
            "message", namespace: NS.client, attributes: ["from": jid.description, "type": "groupchat"],
            children: [.element(x)])
        notices = toEveryone(message)
        return out
    }

    /// Empties the room as its end (§10.9): each occupant gets its own
    /// unavailable presence with a `<destroy/>` naming `alternate`, the
    /// room to go to instead, and `reason`.
    mutating func destroy(alternate: JID?, reason: String?) -> [MUCDelivery] {
        var destroy = Element("destroy", namespace: NS.mucUser)
        destroy[attribute: "jid"] = alternate?.description
        if let reason { destroy.append(Element("reason", namespace: NS.mucUser, children: [.text(reason)])) }
        let unavailable = Element("presence", namespace: NS.client)
        let out = occupants.values.flatMap { occupant in
            presence(of: occupant, to: occupant.resources, unavailable: unavailable, note: PresenceNote(destroy: destroy))
        }
        occupants = [:]
        nicks = [:]
        isDestroyed = true
        return out
    }
}
