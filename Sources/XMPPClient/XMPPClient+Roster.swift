import XMPPCore

extension XMPPClient {
    /// The roster, sorted by JID: the cached copy until the first login,
    /// then the server's, kept current by its pushes.
    public var roster: [RosterContact] {
        contacts.values.sorted { $0.jid < $1.jid }
    }

    /// Adds `jid` to the roster and asks to see their presence (RFC 6121
    /// §2.3 then §3.1).
    /// - Throws: `.invalidRequest` for our own JID or a contact already in
    ///   the roster; `.stanzaError` when the server refuses.
    public func addContact(_ jid: JID, name: String? = nil, groups: [String] = []) async throws(XMPPClientError) {
        let contact = jid.bare
        guard contact != account else { throw .invalidRequest("you cannot add yourself as a contact") }
        guard contacts[contact] == nil else { throw .invalidRequest("\(contact) is already in the roster") }
        let item = RosterContact(jid: contact, name: name, groups: groups)
        try await setRosterItem(item.element)
        send(Presence(type: .subscribe, to: contact).element)
    }

    /// Removes `jid` from the roster; the server also cancels the
    /// subscriptions both ways (RFC 6121 §2.5).
    /// - Throws: `.invalidRequest` if `jid` is not in the roster.
    public func removeContact(_ jid: JID) async throws(XMPPClientError) {
        let contact = jid.bare
        guard contacts[contact] != nil else { throw .invalidRequest("\(contact) is not in the roster") }
        try await setRosterItem(
            Element("item", namespace: NS.roster, attributes: ["jid": contact.description, "subscription": "remove"]))
    }

    /// Lets `jid` see our presence and, unless `subscribeBack` is false or
    /// we already follow them, asks to see theirs.
    public func acceptSubscription(from jid: JID, subscribeBack: Bool = true) async throws(XMPPClientError) {
        guard connection != nil else { throw .notConnected }
        let contact = jid.bare
        send(Presence(type: .subscribed, to: contact).element)
        let existing = contacts[contact]
        let following = existing.map { $0.subscription == .to || $0.subscription == .both || $0.isPendingOut } ?? false
        if subscribeBack, !following {
            send(Presence(type: .subscribe, to: contact).element)
        }
    }

    /// Refuses (or revokes) `jid`'s subscription to our presence.
    public func rejectSubscription(from jid: JID) async throws(XMPPClientError) {
        guard connection != nil else { throw .notConnected }
        send(Presence(type: .unsubscribed, to: jid.bare).element)
    }

    private func setRosterItem(_ item: Element) async throws(XMPPClientError) {
        var query = Element("query", namespace: NS.roster)
        query.append(item)
        _ = try await request(.set, payload: query)
    }

    /// Fetches the roster after login, asking only for changes when the
    /// server supports versioning (RFC 6121 §2.6) and a version is cached.
    func syncRoster() async throws(XMPPClientError) {
        let cached = try? await store.cachedRoster(account: account)
        var query = Element("query", namespace: NS.roster)
        if connection?.features.child("ver", namespace: NS.rosterVersioning) != nil {
            query[attribute: "ver"] = cached?.version ?? ""
        }
        let reply = try await request(.get, payload: query)
        guard let result = reply.payload, result.name == "query", result.namespace == NS.roster else {
            // An empty result: the cached roster is current, and changes
            // since its version arrive as pushes.
            contacts = Dictionary((cached?.contacts ?? []).map { ($0.jid, $0) }, uniquingKeysWith: { $1 })
            broadcaster.publish(.roster(.loaded(roster)))
            return
        }
        let items = result.elements.filter { $0.name == "item" }.compactMap(RosterContact.init(item:))
        contacts = Dictionary(items.map { ($0.jid, $0) }, uniquingKeysWith: { $1 })
        try? await store.replaceRoster(account: account, version: result[attribute: "ver"], contacts: roster)
        broadcaster.publish(.roster(.loaded(roster)))
    }

    /// Applies a roster push, which only our own account may send
    /// (RFC 6121 §2.1.6), and acknowledges it.
    func handleRosterPush(_ iq: IQ) async {
        if let from = iq.from, from != account, from != boundJID {
            if let reply = iq.errorReply(StanzaError(.serviceUnavailable)) { send(reply) }
            return
        }
        let query = iq.payload
        let items = query?.elements.filter { $0.name == "item" } ?? []
        guard items.count == 1, let change = RosterChange(item: items[0]) else {
            if let reply = iq.errorReply(StanzaError(.badRequest)) { send(reply) }
            return
        }
        send(iq.result())
        switch change {
        case .remove(let jid):
            contacts[jid] = nil
            presences[jid] = nil
            broadcaster.publish(.roster(.removed(jid)))
        case .update(let contact):
            contacts[contact.jid] = contact
            broadcaster.publish(.roster(.updated(contact)))
        }
        try? await store.applyRosterPush(account: account, version: query?[attribute: "ver"], change: change)
    }
}
