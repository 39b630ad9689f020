import XMPPCore
import XMPPStorage

/// XEP-0398: User Avatar to vCard-Based Avatars Conversion. A user's
/// avatar is the same whether set through the vCard (XEP-0054 `<PHOTO/>`,
/// read by XEP-0153 clients) or through PEP (XEP-0084), and the server
/// writes its hash into the user's presence for XEP-0153 contacts
/// (`AvatarConversion+Presence.swift`).
///
/// | the user                                   | the server                                  |
/// |--------------------------------------------|---------------------------------------------|
/// | sets a vCard with a new photo              | asks PEP to publish it to `urn:xmpp:avatar:data` (item id: the SHA-1 hex) and its `<info/>` to `urn:xmpp:avatar:metadata` (§3.2) |
/// | sets a vCard without photo, having had one, or with one too big for PEP | asks PEP to publish empty metadata (XEP-0084 §4.6) and retract the old data |
/// | publishes metadata whose first `<info/>` without `url` names an item of the data node | writes that image into the vCard's `<PHOTO/>`, keeping the other fields (§3.1) |
/// | publishes empty metadata, or retracts the last item (PEP retracts each one of a node it purges or deletes) | removes the vCard's `<PHOTO/>`; while items are left, the newest one stays the avatar |
///
/// Not converted: an avatar whose data node is `whitelist` (the vCard is
/// anyone's to read, XEP-0054; XEP-0398 §6; `open` and `presence` ones
/// are), data whose SHA-1 is not its id, a photo bigger than
/// `pep_max_item_size` as base64 (logged), a vCard that the photo would
/// make bigger than `vcard_max_size`, and the PEP changes this feature
/// asked for itself (`onBehalf`).
public struct AvatarConversion: ServerFeature {
    /// The photo hash of each user with a session.
    let hashes = AvatarHashes()
    /// The services that pass a user's presence on to others (the group
    /// chat service), whose presence gets the hash too.
    let presenceServices: [String]

    /// The feature, adding the hash also to presence sent to each of
    /// `presenceServices`.
    public init(presenceServices: [String] = []) {
        self.presenceServices = presenceServices
    }

    public func install(_ hooks: Hooks) {
        hooks.advertiseOnAccount(NS.pepVCardConversion)
        hooks.on(VCardStored.self) { event in self.vCardStored(event) }
        hooks.on(PEPItemPublished.self) { event in
            guard event.node == NS.avatarMetadata, !event.onBehalf,
                let metadata = event.item.child("metadata", namespace: NS.avatarMetadata)
            else { return }
            self.metadataPublished(metadata, by: event.session)
        }
        hooks.on(PEPItemRetracted.self) { event in
            guard event.node == NS.avatarMetadata, !event.onBehalf else { return }
            self.metadataRetracted(by: event.session)
        }
        installPresenceUpdate(hooks)
    }

    // MARK: - vCard to PEP (§3.2)

    private func vCardStored(_ event: VCardStored) {
        guard let username = event.owner.localpart else { return }
        let image = AvatarImage(vCard: event.vCard)
        let before =
            hashes.hash(of: username)
            ?? event.previousXML.flatMap(StoredStanza.parse).flatMap(AvatarImage.init(vCard:))?.hash ?? ""
        let after = image?.hash ?? ""
        guard before != after else { return }
        hashes.set(after, of: event.owner, on: event.session.server)
        let hooks = event.session.server.hooks
        func publish(_ node: String, _ id: String, _ payload: Element) {
            let item = Element("item", namespace: NS.pubsub, attributes: ["id": id], children: [.element(payload)])
            hooks.fire(
                PEPPublishRequest(
                    owner: event.owner, node: node, item: item, configuration: PEPNodeConfiguration(),
                    session: event.session))
        }
        /// XEP-0084 §4.6: empty metadata; the old image goes.
        func disable() {
            publish(NS.avatarMetadata, "current", Element("metadata", namespace: NS.avatarMetadata))
            hooks.fire(PEPRetractRequest(owner: event.owner, node: NS.avatarData, itemID: before, session: event.session))
        }
        guard let image else { return disable() }
        let data = Element("data", namespace: NS.avatarData, children: [.text(Base64.encode(image.bytes))])
        let limit = event.session.server.config.limits.pepMaxItemSize
        guard (StoredStanza.serialize(data)?.utf8.count ?? .max) <= limit else {
            event.session.log.info("the vCard photo of \(username) is too big for a PEP avatar (pep_max_item_size)")
            // PEP must not go on showing the avatar the vCard replaced.
            if !before.isEmpty { disable() }
            return
        }
        publish(NS.avatarData, image.hash, data)
        publish(NS.avatarMetadata, image.hash, Element("metadata", namespace: NS.avatarMetadata, children: [.element(image.info)]))
    }

    // MARK: - PEP to vCard (§3.1)

    /// Writes the avatar that `metadata` announces into the vCard of the
    /// session's user; one without `<info/>` removes the photo.
    private func metadataPublished(_ metadata: Element, by session: ClientSession) {
        guard let photo = Self.photo(announcedBy: metadata) else { return }
        convert(by: session) { _, _ in photo }
    }

    /// An item of the metadata node was retracted (by the owner, or for
    /// each item when PEP purged or deleted the node): the newest item
    /// left, if any, announces the avatar; none removes the photo.
    private func metadataRetracted(by session: ClientSession) {
        convert(by: session) { username, stores in
            let newest = try stores.pep.items(of: NS.avatarMetadata, owner: username, ids: nil, limit: 1).first
                .flatMap { StoredStanza.parse($0.payload) }
            let metadata = newest.flatMap { $0.name == "metadata" && $0.namespace == NS.avatarMetadata ? $0 : nil }
            return Self.photo(announcedBy: metadata)
        }
    }

    /// Writes the photo that `find` returns in a storage job (given the
    /// username) into the vCard of the session's user; nil changes nothing.
    private func convert(
        by session: ClientSession, _ find: @escaping @Sendable (String, Stores) throws -> (id: String?, type: String?)?
    ) {
        guard let username = session.username, let owner = session.jid?.bare else { return }
        let maxVCardSize = session.server.config.limits.maxVCardSize
        session.withStorage({ stores in
            try stores.inTransaction { () throws -> String? in
                guard let photo = try find(username, stores) else { return nil }
                return try Self.writePhoto(id: photo.id, type: photo.type, of: username, maxVCardSize: maxVCardSize, in: stores)
            }
        }) { result in
            switch result {
            case .success(let hash?): self.hashes.set(hash, of: owner, on: session.server)
            case .success(nil): break
            case .failure(let error): session.log.error("converting the PEP avatar of \(username) failed: \(error)")
            }
        }
    }

    /// The image `metadata` announces for the vCard (§3.1): the first
    /// `<info/>` stored here, not at an external URL; `id` nil for no
    /// metadata or one without `<info/>`. Nil for an avatar only at URLs,
    /// which cannot go into the vCard.
    private static func photo(announcedBy metadata: Element?) -> (id: String?, type: String?)? {
        let infos = metadata?.elements.filter { $0.name == "info" && $0.namespace == NS.avatarMetadata } ?? []
        guard !infos.isEmpty else { return (nil, nil) }
        guard let info = infos.first(where: { $0[attribute: "url"] == nil }), let id = info[attribute: "id"] else { return nil }
        return (id, info[attribute: "type"])
    }

    /// Puts the data item `id` into the vCard of `username` as its photo, or
    /// removes the photo when `id` is nil.
    ///
    /// - Returns: The hash the vCard's photo now has ("" for none), or nil
    ///   when nothing changed.
    /// - Throws: `DamagedRecord` for a stored vCard that does not parse,
    ///   which is left as it is.
    private static func writePhoto(
        id: String?, type: String?, of username: String, maxVCardSize: Int, in stores: Stores
    ) throws -> String? {
        var photo: AvatarImage?
        if let id {
            // §6: an avatar the user shows only to some would be shown to all.
            guard try stores.pep.configuration(of: NS.avatarData, owner: username)?.accessModel != .whitelist,
                let item = try stores.pep.items(of: NS.avatarData, owner: username, ids: [id], limit: 1).first,
                let data = StoredStanza.parse(item.payload), data.name == "data", data.namespace == NS.avatarData,
                let bytes = AvatarImage.decode(data.text)
            else { return nil }
            let image = AvatarImage(bytes: bytes, type: type)
            guard image.hash == id.lowercased() else { return nil }  // §3.1: SHOULD verify
            photo = image
        }
        var vCard = Element("vCard", namespace: NS.vcard)
        if let xml = try stores.vCards.vCard(of: username) {
            guard let stored = StoredStanza.parse(xml) else { throw DamagedRecord(description: "the stored vCard of \(username) does not parse") }
            vCard = stored
        } else if photo == nil {
            return ""
        }
        guard AvatarImage(vCard: vCard) != photo else { return nil }
        vCard.removeChildren("PHOTO", namespace: NS.vcard)
        if let photo { vCard.append(photo.vCardPhoto) }
        guard let xml = StoredStanza.serialize(vCard), xml.utf8.count <= maxVCardSize else { return nil }
        try stores.vCards.setVCard(xml, of: username)
        return photo?.hash ?? ""
    }
}
