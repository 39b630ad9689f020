import XMPPCore

/// XEP-0402 PEP Native Bookmarks: the rooms the account keeps, in the PEP
/// node `urn:xmpp:bookmarks:1` (one item per room), which every device of
/// the account reads at login to join those marked autojoin, and follows
/// (`+notify`, XEP-0163) to join those another device marks so.
extension XMPPClient {
    /// The account's room bookmarks; none when the node does not exist yet.
    public func bookmarks() async throws(XMPPClientError) -> [RoomBookmark] {
        let items = Element("items", namespace: NS.pubsub, attributes: ["node": NS.bookmarks])
        let reply: IQ
        do {
            reply = try await request(.get, payload: Element("pubsub", namespace: NS.pubsub, children: [.element(items)]))
        } catch .stanzaError(.itemNotFound, _) {
            return []
        }
        let found = reply.payload?.child("items", namespace: NS.pubsub)?.elements ?? []
        return found.filter { $0.name == "item" }.compactMap(RoomBookmark.init(item:))
    }

    /// Adds or replaces the bookmark of `bookmark.room`. The node is
    /// published as XEP-0402 §3.2 asks: items kept, as many as the server
    /// allows, and seen only by the account (they may hold passwords).
    public func saveBookmark(_ bookmark: RoomBookmark) async throws(XMPPClientError) {
        let item = Element(
            "item", namespace: NS.pubsub, attributes: ["id": bookmark.room.description],
            children: [.element(bookmark.conference)])
        let publish = Element(
            "publish", namespace: NS.pubsub, attributes: ["node": NS.bookmarks], children: [.element(item)])
        let options = DataForm(
            type: "submit",
            fields: [
                DataForm.Field("FORM_TYPE", type: "hidden", values: [NS.pubsubPublishOptions]),
                DataForm.Field("pubsub#persist_items", values: ["true"]),
                DataForm.Field("pubsub#max_items", values: ["max"]),
                DataForm.Field("pubsub#send_last_published_item", values: ["never"]),
                DataForm.Field("pubsub#access_model", values: ["whitelist"]),
            ])
        let publishOptions = Element("publish-options", namespace: NS.pubsub, children: [.element(options.element)])
        _ = try await request(
            .set, payload: Element("pubsub", namespace: NS.pubsub, children: [.element(publish), .element(publishOptions)]))
    }

    /// Removes the bookmark of `room`, if there is one.
    public func removeBookmark(_ room: JID) async throws(XMPPClientError) {
        let item = Element("item", namespace: NS.pubsub, attributes: ["id": room.bare.description])
        let retract = Element(
            "retract", namespace: NS.pubsub, attributes: ["node": NS.bookmarks, "notify": "true"],
            children: [.element(item)])
        do {
            _ = try await request(.set, payload: Element("pubsub", namespace: NS.pubsub, children: [.element(retract)]))
        } catch .stanzaError(.itemNotFound, _) {
            return
        }
    }

    /// Takes a notification of our bookmarks node (XEP-0402 §3.3): a room
    /// bookmarked for autojoin elsewhere is joined here too. Only our own
    /// account may send them. Returns whether `message` was one.
    func handleBookmarksNotification(_ message: Message) -> Bool {
        guard let items = message.element.child("event", namespace: NS.pubsubEvent)?.child("items", namespace: NS.pubsubEvent),
            items[attribute: "node"] == NS.bookmarks
        else { return false }
        guard message.from == nil || message.from == account else { return true }
        for item in items.elements where item.name == "item" {
            if let bookmark = RoomBookmark(item: item) { autojoin(bookmark) }
        }
        return true
    }
}
