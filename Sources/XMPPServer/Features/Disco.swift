import XMPPCore

/// XEP-0030: Service Discovery. The domain's info lists the server identity
/// and every feature the installed features advertise; an account's own
/// bare JID answers as a registered account, with the features advertised
/// for accounts. The domain's items are the services features host at
/// domains of their own (`Hooks.advertiseItem`, such as HTTP upload); an
/// account has none.
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
            guard var query = Self.query(request) else { return }
            query.append(Self.identity(category: "account", type: "registered", name: nil))
            request.reply(Self.adding(request.server.hooks.accountDiscoFeatures, to: query))
        }
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
