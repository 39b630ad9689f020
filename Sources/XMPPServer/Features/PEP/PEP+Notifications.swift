import XMPPCore
import XMPPStorage

extension PEP {
    /// The prefix of the ids of the server's disco#info queries for
    /// capabilities, which tells their answers apart.
    static let capsQueryPrefix = "pep-caps-"

    /// Sends `event`, about `node` of `owner` (a bare JID), to each
    /// available resource that wants the node's notifications (XEP-0163
    /// §4.2, §4.3): the owner's own and those of `audience.contacts`,
    /// unless one blocks the other.
    ///
    /// Both access models let in every contact who shares presence; the
    /// other readers an `open` node allows would have to subscribe, which
    /// Swiftlet does not support.
    func notify(_ event: Element, node: String, of owner: JID, _ audience: Audience, server: ServerContext) {
        var handles = server.sessions.availableSessions(of: owner)
        for contact in audience.contacts {
            guard let jid = try? JID(contact), jid.domainpart == server.domain, jid.localpart != nil,
                server.blocklists.verdict(from: owner, to: jid) == .allowed
            else { continue }
            handles += server.sessions.availableSessions(of: jid)
        }
        for handle in handles where wants(handle, node) {
            handle.deliver(Self.notification(event, from: owner, to: handle.jid))
        }
    }

    /// Whether an available resource gets the notifications of `node`: it
    /// asks for them in its capabilities and its priority is not negative
    /// (XEP-0163 §4.3.2: "appropriate presence information").
    private func wants(_ handle: SessionHandle, _ node: String) -> Bool {
        guard let priority = handle.presence?.priority, priority >= 0 else { return false }
        return caps.interests(of: handle.jid).contains(node)
    }

    /// `<message type='headline'/>` from the owner's bare JID (XEP-0163
    /// §4.3.1) to a resource.
    static func notification(_ event: Element, from owner: JID, to jid: JID) -> Element {
        Element(
            "message", namespace: NS.client,
            attributes: ["type": "headline", "from": owner.description, "to": jid.description],
            children: [.element(event)])
    }

    /// Follows a resource's broadcast presence: its capabilities decide
    /// which notifications it gets; an unknown `ver` is asked for with
    /// disco#info to `node#ver` (XEP-0115 §6.3); unavailable forgets it.
    func presenceChanged(_ presence: Presence, of session: ClientSession) {
        guard let jid = session.jid else { return }
        guard presence.type == .available else { return caps.remove(jid) }
        switch caps.presence(EntityCapabilities(presence: presence.element), of: jid) {
        case .unchanged:
            return
        case .changed(let change):
            sendLastItems(of: change.added, to: jid, server: session.server)
        case .query(let id, let queried):
            let query = Element("query", namespace: NS.discoInfo, attributes: ["node": queried.discoNode])
            var iq = IQ(type: .get, to: jid, id: Self.capsQueryPrefix + id, payload: query).element
            iq[attribute: "from"] = session.server.domain
            session.deliver(iq)
        }
    }

    /// Takes a resource's answer to a capabilities query; true when the
    /// IQ was one (whatever became of it).
    func capsAnswered(_ iq: IQ, from session: ClientSession) -> Bool {
        guard let id = iq.id, id.hasPrefix(Self.capsQueryPrefix), let jid = session.jid else { return false }
        let info = iq.type == .result ? iq.payload.flatMap { $0.name == "query" && $0.namespace == NS.discoInfo ? $0 : nil } : nil
        if let change = caps.answer(id: String(id.dropFirst(Self.capsQueryPrefix.count)), from: jid, info: info) {
            sendLastItems(of: change.added, to: jid, server: session.server)
        }
        return true
    }

    /// XEP-0163 §4.3.4: sends `jid`, a resource that has just become
    /// interested in `nodes`, the last item of each of those nodes of its
    /// own account and of the contacts who share presence with it.
    func sendLastItems(of nodes: Set<String>, to jid: JID, server: ServerContext) {
        guard !nodes.isEmpty, let username = jid.localpart else { return }
        let domain = server.domain
        server.storage.run(on: server.loop, { stores -> [(owner: String, last: PEPLastItem)] in
            var owners = [username]
            for item in try stores.roster.items(of: username)
            where item.state.subscription == .to || item.state.subscription == .both {
                guard let contact = try? JID(item.contact), contact.domainpart == domain, let owner = contact.localpart
                else { continue }
                owners.append(owner)
            }
            return try owners.flatMap { owner in
                try stores.pep.lastItems(of: owner).filter { nodes.contains($0.node) }.map { (owner, $0) }
            }
        }) { result in
            let found: [(owner: String, last: PEPLastItem)]
            switch result {
            case .success(let items): found = items
            case .failure(let error): return server.log.error("PEP last items for \(jid) failed: \(error)")
            }
            guard let handle = server.sessions.session(jid) else { return }
            for (owner, last) in found where wants(handle, last.node) {
                guard let ownerJID = try? JID(localpart: owner, domainpart: domain),
                    server.blocklists.verdict(from: ownerJID, to: jid) == .allowed
                else { continue }
                guard let payload = StoredStanza.parse(last.item.payload) else {
                    server.log.error("a stored PEP item of \(owner) in \(last.node) does not parse")
                    continue
                }
                let item = Element("item", namespace: NS.pubsubEvent, attributes: ["id": last.item.id], children: [.element(payload)])
                handle.deliver(Self.notification(Self.items(last.node, [item]), from: ownerJID, to: jid))
            }
        }
    }
}
