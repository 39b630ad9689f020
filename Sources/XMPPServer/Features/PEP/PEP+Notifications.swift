import XMPPNet
import XMPPCore
import XMPPStorage

extension PEP {
    /// The id of the server's disco#info queries for capabilities, as
    /// Prosody sends them; answers are told apart by sender and node.
    static let capsQueryID = "disco"

    /// Sends `event`, about `node` of `owner` (a bare JID), to each
    /// available resource that wants the node's notifications (XEP-0163
    /// §4.2, §4.3): the owner's own and those of `audience.contacts`;
    /// and to the resources of its subscribers (XEP-0060 §7.1.2), whatever
    /// their capabilities; each once, unless one blocks the other.
    func notify(_ event: Element, node: String, of owner: JID, _ audience: Audience, server: ServerContext) {
        var handles = server.sessions.availableSessions(of: owner)
        for contact in audience.contacts {
            guard let jid = try? JID(contact), jid.domainpart == server.domain, jid.localpart != nil,
                server.blocklists.verdict(from: owner, to: jid) == .allowed
            else { continue }
            handles += server.sessions.availableSessions(of: jid)
        }
        var notified = Set<JID>()
        for handle in handles where wants(handle, node) && notified.insert(handle.jid).inserted {
            handle.deliver(Self.notification(event, from: owner, to: handle.jid))
        }
        for subscriber in audience.subscribers where server.blocklists.verdict(from: owner, to: subscriber) == .allowed {
            for handle in Self.sessions(of: subscriber, server: server) where notified.insert(handle.jid).inserted {
                handle.deliver(Self.notification(event, from: owner, to: handle.jid))
            }
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
    /// disco#info to `node#ver` (XEP-0115 §6.3), by the account's PEP
    /// service and then by those of the contacts who get the presence;
    /// unavailable forgets it.
    func presenceChanged(_ presence: Presence, of session: ClientSession) {
        guard let jid = session.jid else { return }
        guard presence.type == .available else { return caps.remove(jid) }
        switch caps.presence(EntityCapabilities(presence: presence.element), of: jid) {
        case .unchanged:
            return
        case .changed(let change):
            sendLastItems(of: change.added, to: jid, server: session.server)
        case .query(let queried):
            session.deliver(Self.capsQuery(queried, from: jid.bare, to: jid))
            askFromContacts(queried, of: jid, server: session.server)
        }
    }

    /// The contacts' services ask too, once the presence has reached them:
    /// the roster is read after the broadcast's own reading, so their
    /// queries follow the presence the resource gets back.
    private func askFromContacts(_ queried: EntityCapabilities, of jid: JID, server: ServerContext) {
        guard let username = jid.localpart else { return }
        let bound = LoopBound(server, on: server.loop)
        server.loop.execute {
            let server = bound.wrapped
            server.storage.run(on: server.loop, { stores in
                try stores.roster.items(of: username).filter(\.state.sharesPresence).map(\.contact)
            }) { result in
                guard case .success(let contacts) = result else { return }
                for contact in contacts {
                    guard let service = try? JID(contact), service.domainpart == server.domain, service.localpart != nil,
                        server.blocklists.verdict(from: jid, to: service) == .allowed,
                        server.blocklists.verdict(from: service, to: jid) == .allowed,
                        caps.ask(service, about: queried, of: jid),
                        let handle = server.sessions.session(jid)
                    else { continue }
                    handle.deliver(Self.capsQuery(queried, from: service, to: jid))
                }
            }
        }
    }

    /// A disco#info query for `queried.discoNode` from `service` to `jid`.
    private static func capsQuery(_ queried: EntityCapabilities, from service: JID, to jid: JID) -> Element {
        let query = Element("query", namespace: NS.discoInfo, attributes: ["node": queried.discoNode])
        var iq = IQ(type: .get, to: jid, id: capsQueryID, payload: query).element
        iq[attribute: "from"] = service.description
        return iq
    }

    /// Takes a resource's answer to a capabilities query; true when the
    /// IQ was one (whatever became of it). The first answer tells the
    /// interests, and the last items of the nodes newly wanted follow,
    /// but for the contacts whose services still await their answers:
    /// each of those answers brings that contact's last items (as
    /// Prosody's services each send theirs), so each comes once.
    func capsAnswered(_ iq: IQ, from session: ClientSession) -> Bool {
        guard iq.id == Self.capsQueryID, let jid = session.jid else { return false }
        let info = iq.type == .result ? iq.payload.flatMap { $0.name == "query" && $0.namespace == NS.discoInfo ? $0 : nil } : nil
        if iq.type == .result, info == nil { return false }
        let service = iq.element[attribute: "to"].flatMap { try? JID($0) }?.bare ?? jid.bare
        guard let answer = caps.answer(from: jid, to: service, info: info) else { return false }
        if let change = answer.change {
            sendLastItems(of: change.added, to: jid, except: answer.awaiting, server: session.server)
        } else if service != jid.bare {
            sendLastItems(of: answer.added, to: jid, from: service, server: session.server)
        }
        return true
    }

    /// XEP-0163 §4.3.4: sends `jid`, a resource that has just become
    /// interested in `nodes`, the last item of each of those nodes of
    /// `owner`, or else of its own account and of the contacts it follows
    /// (but those in `except`), that it may read, where the node sends its
    /// last item at presence.
    func sendLastItems(
        of nodes: Set<String>, to jid: JID, from owner: JID? = nil, except: Set<JID> = [], server: ServerContext
    ) {
        guard !nodes.isEmpty, let username = jid.localpart else { return }
        let domain = server.domain
        server.storage.run(on: server.loop, { stores -> [(owner: String, last: PEPLastItem)] in
            var owners = [owner?.localpart ?? username]
            if owner == nil {
                for item in try stores.roster.items(of: username) where item.state.subscription.includesTo {
                    guard let contact = try? JID(item.contact), contact.domainpart == domain, let name = contact.localpart,
                        !except.contains(contact.bare)
                    else { continue }
                    owners.append(name)
                }
            }
            return try owners.flatMap { owner in
                try Self.lastItems(of: owner, nodes: Array(nodes), readableBy: jid, in: stores).filter {
                    $0.configuration.lastItemDelivery == .onSubscriptionAndPresence
                }.map { (owner, $0) }
            }
        }) { result in
            switch result {
            case .success(let found): deliverLastItems(found, to: server.sessions.session(jid).map { [$0] } ?? [], server: server)
            case .failure(let error): server.log.error("PEP last items for \(jid) failed: \(error)")
            }
        }
    }

    /// XEP-0163 §4.3.4: `contact` has just been allowed to see the
    /// presence of `owner` (a subscription approved): its available
    /// resources get the last item of each node of `owner` they want and
    /// may read, where the node sends its last item at subscription.
    func sendLastItems(of owner: JID, toNewSubscriber contact: JID, server: ServerContext) {
        guard let username = owner.localpart, contact.domainpart == server.domain, contact.localpart != nil,
            !server.sessions.availableSessions(of: contact.bare).isEmpty
        else { return }
        server.storage.run(on: server.loop, { stores in
            try Self.lastItems(of: username, nodes: nil, readableBy: contact, in: stores).filter {
                $0.configuration.lastItemDelivery != .never
            }.map { (owner: username, last: $0) }
        }) { result in
            switch result {
            case .success(let found):
                deliverLastItems(found, to: server.sessions.availableSessions(of: contact.bare), server: server)
            case .failure(let error): server.log.error("PEP last items of \(owner) for \(contact) failed: \(error)")
            }
        }
    }

    /// The last items of the nodes of `owner` named in `nodes` (all when
    /// nil) that `reader` may read.
    private static func lastItems(
        of owner: String, nodes: [String]?, readableBy reader: JID, in stores: Stores
    ) throws -> [PEPLastItem] {
        let items = try stores.pep.lastItems(of: owner, nodes: nodes)
        guard !items.isEmpty else { return [] }
        let shares = try reader.localpart != owner && sharesPresence(owner, with: reader, in: stores)
        return items.filter { mayRetrieve(reader, from: owner, $0.configuration, sharesPresence: shares) }
    }

    /// Sends each of `handles` the items of `found` whose nodes it wants,
    /// unless the owner and it block each other; with `<delay/>` stamped
    /// when the item was published (XEP-0203), since it is not new.
    private func deliverLastItems(_ found: [(owner: String, last: PEPLastItem)], to handles: [SessionHandle], server: ServerContext) {
        for (owner, last) in found {
            guard let ownerJID = try? JID(localpart: owner, domainpart: server.domain),
                let message = Self.lastItemMessage(last, of: ownerJID, log: server.log)
            else { continue }
            for handle in handles where wants(handle, last.node) {
                guard server.blocklists.verdict(from: ownerJID, to: handle.jid) == .allowed else { continue }
                var addressed = message
                addressed[attribute: "to"] = handle.jid.description
                handle.deliver(addressed)
            }
        }
    }

    /// The notification of a node's last item, without `to`; nil (and a
    /// log line) when the stored payload does not parse.
    static func lastItemMessage(_ last: PEPLastItem, of owner: JID, log: Logger) -> Element? {
        guard let payload = StoredStanza.parse(last.item.payload) else {
            log.error("a stored PEP item of \(owner) in \(last.node) does not parse")
            return nil
        }
        let stored = Element("item", namespace: NS.pubsub, attributes: ["id": last.item.id], children: [.element(payload)])
        var message = Element(
            "message", namespace: NS.client, attributes: ["type": "headline", "from": owner.description],
            children: [.element(items(last.node, [eventItem(stored, of: owner, last.configuration)]))])
        message.append(
            Element(
                "delay", namespace: NS.delay,
                attributes: [
                    "from": owner.description, "stamp": DateTimeProfile.string(millisecondsSince1970: last.item.published),
                ]))
        return message
    }
}
