import XMPPCore

/// XEP-0030: Service Discovery. The domain's info lists the server identity
/// and every feature the installed features advertise; an account's bare
/// JID answers as a registered account, with the identities and features
/// advertised for accounts, to the user and to contacts the user shares
/// presence with (`from` or `both`); to anyone else, and for an unknown
/// account, it is `service-unavailable` (RFC 6121 §8.5.1: the server does
/// not tell a stranger which accounts exist). The domain's items are the
/// services features host at domains of their own (`Hooks.advertiseItem`,
/// such as HTTP upload); an account has none.
public struct Disco: ServerFeature {
    public init() {}

    public func install(_ hooks: inout Hooks) {
        for feature in [NS.discoInfo, NS.discoItems] {
            hooks.advertise(feature)
            hooks.advertiseOnAccount(feature)
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.host]) { request in
            guard var query = Self.query(request) else { return }
            query.append(Self.identity(category: "server", type: "im", name: "Swiftlet"))
            request.reply(Self.adding(request.server.hooks.discoFeatures, to: query))
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.account]) { request in
            guard let query = Self.query(request) else { return }
            request.reply(Self.accountInfo(query, hooks: request.server.hooks))
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.user], Self.contactInfo)
        hooks.onIQ(.get, NS.discoItems, "query", to: [.host]) { request in
            guard var query = Self.query(request) else { return }
            for item in request.server.hooks.discoItems {
                var element = Element("item", namespace: NS.discoItems, attributes: ["jid": item.jid])
                if let name = item.name { element[attribute: "name"] = name }
                query.append(element)
            }
            request.reply(query)
        }
        hooks.onIQ(.get, NS.discoItems, "query", to: [.account]) { request in
            guard let query = Self.query(request) else { return }
            request.reply(query)
        }
    }

    /// disco#info of another user's bare JID: the account's, if the user
    /// shares presence with the requester.
    @Sendable private static func contactInfo(_ request: IQRequest) {
        guard let username = request.target.localpart, let requester = request.session.jid else { return }
        request.session.withStorage({ stores in
            try stores.reaches(username, from: requester)
                && (try stores.roster.item(requester.bare.description, of: username)?.state.sharesPresence ?? false)
        }) { result in
            switch result {
            case .success(true):
                guard let query = Self.query(request) else { return }
                request.reply(Self.accountInfo(query, hooks: request.server.hooks))
            case .success(false):
                request.fail(StanzaError(.serviceUnavailable))
            case .failure(let error):
                request.session.log.error("disco#info of \(username) failed: \(error)")
                request.fail(StanzaError(.internalServerError))
            }
        }
    }

    /// `query` as an account answers it: `account/registered`, the
    /// identities and features features advertise on accounts.
    static func accountInfo(_ query: Element, hooks: Hooks) -> Element {
        var query = query
        query.append(Self.identity(category: "account", type: "registered", name: nil))
        for identity in hooks.accountDiscoIdentities {
            query.append(Self.identity(category: identity.category, type: identity.type, name: nil))
        }
        return Self.adding(hooks.accountDiscoFeatures, to: query)
    }

    /// The empty answer `<query/>`; nil (after answering `item-not-found`)
    /// for a `node`, since the server has none.
    static func query(_ request: IQRequest) -> Element? {
        let namespace = request.iq.payload!.namespace
        guard request.iq.payload![attribute: "node"] == nil else {
            request.fail(StanzaError(.itemNotFound, text: "no such node"))
            return nil
        }
        return Element("query", namespace: namespace)
    }

    /// `query` with a `<feature/>` for each of `features`.
    static func adding(_ features: [String], to query: Element) -> Element {
        var query = query
        for feature in features {
            query.append(Element("feature", namespace: NS.discoInfo, attributes: ["var": feature]))
        }
        return query
    }

    static func identity(category: String, type: String, name: String?) -> Element {
        var identity = Element("identity", namespace: NS.discoInfo, attributes: ["category": category, "type": type])
        if let name { identity[attribute: "name"] = name }
        return identity
    }
}
