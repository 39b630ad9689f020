import XMPPCore
import XMPPStorage

/// RFC 6121 §2: the roster. Get (with versioning, §2.6), add or update and
/// remove (§2.3, §2.5), and a push of every change to the user's
/// interested resources (§2.1.6).
///
/// Removing an item also cancels the subscriptions both ways (§2.5.2):
/// `Subscriptions` does that on the `RosterItemRemoved` this fires.
public struct Roster: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.streamFeature { session in
            session.phase == .authenticated ? Element("ver", namespace: NS.rosterVersioning) : nil
        }
        hooks.onIQ(.get, NS.roster, "query", to: [.account], Self.get)
        hooks.onIQ(.set, NS.roster, "query", to: [.account], Self.set)
    }

    /// Answers the whole roster with its version, whatever version the
    /// client says it has. The requesting resource becomes interested: it
    /// gets pushes from now on.
    ///
    /// COMPAT: XMPPFramework: §2.6.3 also allows an empty result when that
    /// version is current, but `-fetchRosterVersion:` does not recognise
    /// one and empties its roster.
    @Sendable private static func get(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        request.session.state[RosterInterest.self] = true
        return .afterStorage({ stores in
            (try stores.roster.items(of: username), try stores.roster.version(of: username))
        }) { items, version in
            var query = Element("query", namespace: NS.roster, attributes: ["ver": String(version)])
            for item in items where item.inRoster { query.append(item.element) }
            return .result(query)
        }
    }

    /// Adds, updates or removes one item (§2.3, §2.5).
    @Sendable private static func set(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let server = request.server
        guard let owner = request.session.jid?.bare else { throw StanzaError(.notAuthorized) }
        switch try Change(request.iq.payload!, owner: owner, maxGroups: server.config.limits.rosterMaxGroups) {
        case .update(let contact, let name, let groups):
            let maxItems = server.config.limits.rosterMaxItems
            return .afterStorage({ stores in
                var item = try stores.roster.item(contact.description, of: username)
                    ?? RosterItem(contact: contact.description, inRoster: false)
                if !item.inRoster, try stores.roster.items(of: username).count(where: \.inRoster) >= maxItems {
                    throw StanzaError(.policyViolation, text: "at most \(maxItems) roster items")
                }
                item.name = name
                item.groups = groups
                item.inRoster = true
                return (item, try stores.roster.put(item, of: username))
            }) { item, version in
                .result { server.pushRosterItem(item.element, version: version, to: owner) }
            }
        case .remove(let contact):
            return .afterStorage({ stores in
                guard let item = try stores.roster.item(contact.description, of: username), item.inRoster,
                    let version = try stores.roster.remove(contact.description, of: username)
                else { throw StanzaError(.itemNotFound, text: "no such roster item") }
                return (item, version)
            }) { item, version in
                .result {
                    var removed = Element("item", namespace: NS.roster, attributes: ["jid": contact.description])
                    removed[attribute: "subscription"] = "remove"
                    server.pushRosterItem(removed, version: version, to: owner)
                    server.hooks.fire(RosterItemRemoved(owner: owner, contact: contact, state: item.state, server: server))
                }
            }
        }
    }

    /// What a roster set asks for, checked against RFC 6121 §2.3.3 and §2.5.
    private enum Change {
        case update(JID, name: String?, groups: [String])
        case remove(JID)

        init(_ query: Element, owner: JID, maxGroups: Int) throws(StanzaError) {
            let items = query.elements
            guard items.count == 1, let item = items.first, item.name == "item", item.namespace == NS.roster else {
                throw StanzaError(.badRequest, text: "a roster set carries exactly one <item/>")
            }
            guard let address = item[attribute: "jid"], let contact = try? JID(address), contact.isBare else {
                throw StanzaError(.badRequest, text: "the item needs a valid bare 'jid'")
            }
            guard contact != owner else {
                throw StanzaError(.notAllowed, text: "you cannot add yourself to your roster")
            }
            // §2.1.2.5: in a roster set the server ignores every value of
            // `subscription` but "remove" (slixmpp always sends one).
            if item[attribute: "subscription"] == "remove" {
                self = .remove(contact)
                return
            }
            let name = item[attribute: "name"]
            var groups: [String] = []
            var seen: Set<String> = []
            for group in item.elements where group.name == "group" {
                let title = group.text
                guard !title.isEmpty else { throw StanzaError(.notAcceptable, text: "an empty <group/>") }
                guard seen.insert(title).inserted else { throw StanzaError(.badRequest, text: "group '\(title)' twice") }
                guard title.utf8.count <= 1023 else { throw StanzaError(.notAcceptable, text: "group name too long") }
                guard groups.count < maxGroups else {
                    throw StanzaError(.policyViolation, text: "at most \(maxGroups) groups per roster item")
                }
                groups.append(title)
            }
            guard (name?.utf8.count ?? 0) <= 1023 else { throw StanzaError(.notAcceptable, text: "name too long") }
            self = .update(contact, name: name, groups: groups)
        }
    }
}
