import XMPPCore

/// The group chat service's address as the settings resolve it, and the
/// checks of the `muc_*` keys.
extension ServerConfig {
    /// The group chat service's address: `muc_domain`, or
    /// `conference.<domain>` when it is empty.
    public var mucService: String {
        muc.domain.isEmpty ? "conference.\(domain)" : muc.domain
    }

    /// Checks the `muc_*` keys; normalizes `muc_domain`.
    mutating func checkMUC() throws(ConfigError) {
        if !muc.domain.isEmpty {
            do {
                muc.domain = try ConfigValueType<String>.domain.parse(muc.domain)
            } catch {
                throw ConfigError(key: "muc_domain", error.message)
            }
        }
        if mucService == domain || (upload.enabled && uploadServiceAddresses.contains(mucService)) {
            throw ConfigError(
                key: "muc_domain", "must differ from the domain and the upload service, such as conference.\(domain)")
        }
        try require(muc.historyLength, in: 0...1000, key: "muc_history_length", formatNumber)
        try require(muc.maxOccupants, in: 1...100_000, key: "muc_max_occupants", formatNumber)
        try require(muc.maxRoomsPerUser, in: 1...10_000, key: "muc_max_rooms_per_user", formatNumber)
        try require(muc.maxRoomNameLength, in: 1...1023, key: "muc_max_room_name_length", formatNumber)
        try require(muc.maxNickLength, in: 1...1023, key: "muc_max_nick_length", formatNumber)
        try require(muc.maxStanzaSize, in: 1024...(1 << 20), key: "muc_max_stanza_size", formatSize)
        try require(muc.maxAffiliations, in: 1...100_000, key: "muc_max_affiliations", formatNumber)
        for creator in muc.roomCreators {
            guard let jid = try? JID(creator), jid.localpart != nil, jid.resourcepart == nil else {
                throw ConfigError(key: "muc_room_creators", "'\(creator)' is not a bare JID such as alice@\(domain)")
            }
        }
        try require(muc.archiveMaxMessages, in: 1...10_000_000, key: "muc_archive_max_messages", formatNumber)
    }
}
