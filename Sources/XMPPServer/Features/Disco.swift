import XMPPCore

/// XEP-0030: Service Discovery. The domain's info lists the server identity
/// and every feature the installed features advertise; an account's own
/// bare JID answers as a registered account with the features installed
/// for accounts (its message archive). Items are empty until a component
/// (upload, MUC) exists.
public struct Disco: ServerFeature {
    public init() {}

    public func install(_ hooks: inout Hooks) {
        hooks.advertise(NS.discoInfo)
        hooks.advertise(NS.discoItems)
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.host]) { request in
            guard var query = Self.query(request) else { return }
            query.append(Self.identity(category: "server", type: "im", name: "Swiftlet"))
            for feature in request.server.hooks.discoFeatures {
                query.append(Element("feature", namespace: NS.discoInfo, attributes: ["var": feature]))
            }
            request.reply(query)
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.account]) { request in
            guard var query = Self.query(request) else { return }
            query.append(Self.identity(category: "account", type: "registered", name: nil))
            for feature in [NS.discoInfo, NS.discoItems] + request.server.hooks.accountDiscoFeatures {
                query.append(Element("feature", namespace: NS.discoInfo, attributes: ["var": feature]))
            }
            request.reply(query)
        }
        hooks.onIQ(.get, NS.discoItems, "query", to: [.host, .account]) { request in
            guard let query = Self.query(request) else { return }
            request.reply(query)
        }
    }

    /// The empty answer `<query/>`; nil (after answering `item-not-found`)
    /// for a `node`, since the server has none.
    private static func query(_ request: IQRequest) -> Element? {
        let namespace = request.iq.payload!.namespace
        guard request.iq.payload![attribute: "node"] == nil else {
            request.fail(StanzaError(.itemNotFound, text: "no such node"))
            return nil
        }
        return Element("query", namespace: namespace)
    }

    private static func identity(category: String, type: String, name: String?) -> Element {
        var identity = Element("identity", namespace: NS.discoInfo, attributes: ["category": category, "type": type])
        if let name { identity[attribute: "name"] = name }
        return identity
    }
}
