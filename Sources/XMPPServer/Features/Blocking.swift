import XMPPCore
import XMPPStorage

/// XEP-0191: Blocking Command. A user gets their blocklist, blocks and
/// unblocks JIDs (an item-less `<unblock/>` unblocks all), and every
/// resource that asked for the list gets each change pushed (§3.2–§3.4).
///
/// The lists live in SQLite and, for users with a session, in
/// `ServerContext.blocklists`: a session loads its user's list when it
/// authenticates and releases it when it ends, so routing decides without
/// storage (`Blocking+Routing.swift` has the rules).
///
/// Choices where the XEP leaves room:
/// - An item-less `<block/>` is `bad-request` (§3.3); an item without a
///   valid `jid` is `jid-malformed`, and nothing changes.
/// - A list may hold `blocklist_max_items` JIDs; more is `policy-violation`.
/// - "Polite blocking" (§5): subscriptions stay. Contacts who could see the
///   user's presence and are now blocked get unavailable presence from each
///   available resource (§3.3); unblocked ones get the current presence
///   back (§3.4), and the user gets theirs, which was dropped meanwhile.
public struct Blocking: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.blocking)
        hooks.onPreRoute(Self.intercept)
        hooks.onAuthenticated(Self.load)
        hooks.onSessionEnded(Self.release)
        hooks.onIQ(.get, NS.blocking, "blocklist", to: [.account], Self.get)
        hooks.onIQ(.set, NS.blocking, "block", to: [.account], Self.change)
        hooks.onIQ(.set, NS.blocking, "unblock", to: [.account], Self.change)
    }

    /// Whether a resource asked for the blocklist, and so gets the pushes
    /// of its changes (§3.2).
    enum Interested: FeatureStateKey {
        static let initialValue = false
    }

    /// Whether a session holds its user's entry in `server.blocklists`
    /// (loaded at authentication, released at the end).
    enum HoldsList: FeatureStateKey {
        static let initialValue = false
    }

    // MARK: - The cached list

    /// Loads the user's list into the cache; the session's input (its bind
    /// request included) waits for it.
    @Sendable private static func load(_ session: ClientSession) {
        guard let username = session.username else { return }
        session.withStorage({ stores in try stores.blocklists.blocklist(of: username) }) { result in
            guard case .success(let jids) = result else {
                session.log.error("cannot load the blocklist of \(username): \(result)")
                return session.fail(StreamError(.internalServerError, text: "cannot load the blocklist"))
            }
            session.server.blocklists.retain(username, loaded: Blocklist(jids))
            session.state[HoldsList.self] = true
        }
    }

    /// Releases the session's hold on the cached list, after the storage
    /// jobs queued so far have completed: their completions (the
    /// unavailable presence of a departing session, say) still see it.
    @Sendable private static func release(_ session: ClientSession) {
        guard session.state[HoldsList.self], let username = session.username else { return }
        session.state[HoldsList.self] = false
        let server = session.server
        server.storage.run(on: server.loop, { _ in }) { _ in server.blocklists.release(username) }
    }

    // MARK: - Requests

    /// §3.2: the list, from the cache. The resource gets pushes from now on.
    @Sendable private static func get(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        request.session.state[Interested.self] = true
        let list = request.server.blocklists.list(of: username) ?? Blocklist()
        var blocklist = Element("blocklist", namespace: NS.blocking)
        for jid in list.jids.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            blocklist.append(Element("item", namespace: NS.blocking, attributes: ["jid": jid]))
        }
        return .result(blocklist)
    }

    /// A block or unblock command.
    private enum Change: Sendable {
        case block([String])
        case unblock([String])
        case unblockAll

        /// Reads `<block/>` or `<unblock/>`; JIDs come back prepared, once each.
        init(_ payload: Element) throws(StanzaError) {
            var jids: [String] = []
            var seen: Set<String> = []
            for item in payload.elements where item.name == "item" && item.namespace == NS.blocking {
                guard let text = item[attribute: "jid"], let jid = try? JID(text) else {
                    throw StanzaError(.jidMalformed, text: "each <item/> needs a valid 'jid'")
                }
                if seen.insert(jid.description).inserted { jids.append(jid.description) }
            }
            if payload.name == "block" {
                guard !jids.isEmpty else { throw StanzaError(.badRequest, text: "a <block/> needs at least one <item/>") }
                self = .block(jids)
            } else {
                self = jids.isEmpty ? .unblockAll : .unblock(jids)
            }
        }

        /// The command as pushed to the user's resources.
        var element: Element {
            switch self {
            case .block(let jids): Self.element("block", jids)
            case .unblock(let jids): Self.element("unblock", jids)
            case .unblockAll: Self.element("unblock", [])
            }
        }

        private static func element(_ name: String, _ jids: [String]) -> Element {
            Element(
                name, namespace: NS.blocking,
                children: jids.map { .element(Element("item", namespace: NS.blocking, attributes: ["jid": $0])) })
        }

        func apply(to list: inout Blocklist) {
            switch self {
            case .block(let jids): list.insert(jids)
            case .unblock(let jids): list.remove(jids)
            case .unblockAll: list.removeAll()
            }
        }

        func store(for username: String, in stores: Stores) throws {
            switch self {
            case .block(let jids): try stores.blocklists.block(jids, for: username)
            case .unblock(let jids): try stores.blocklists.unblock(jids, for: username)
            case .unblockAll: try stores.blocklists.unblockAll(for: username)
            }
        }
    }

    /// §3.3–§3.5: stores the change, answers, updates the cache, tells
    /// whoever observes `BlocklistChanged` (the presence effects), and
    /// pushes the change.
    @Sendable private static func change(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let server = request.server
        guard let user = request.session.jid?.bare else { throw StanzaError(.notAuthorized) }
        let change = try Change(request.iq.payload!)
        let limit = server.config.limits.blocklistMaxItems
        return .afterStorage({ stores in
            let before = Blocklist(try stores.blocklists.blocklist(of: username))
            var after = before
            change.apply(to: &after)
            guard after.jids.count <= limit || after.jids.count <= before.jids.count else {
                throw StanzaError(.policyViolation, text: "a blocklist holds at most \(limit) JIDs")
            }
            try change.store(for: username, in: stores)
            return (before, after, try stores.roster.items(of: username))
        }) { before, after, roster in
            .result {
                server.blocklists.update(username) { change.apply(to: &$0) }
                server.hooks.fire(BlocklistChanged(user: user, before: before, after: after, roster: roster, server: server))
                server.push(change.element, to: user) { $0.state[Interested.self] }
            }
        }
    }
}
