import XMPPCore

/// The pieces of a disco#info or disco#items answer (XEP-0030), shared by
/// every feature that answers for an address: the server and accounts
/// (`Disco`), and services at their own domains (`HTTPUpload`).
enum DiscoAnswer {
    /// The empty answer `<query/>`; a request for a `node` is
    /// `item-not-found`, since the server has none.
    static func query(_ request: IQRequest) throws(StanzaError) -> Element {
        let namespace = request.iq.payload!.namespace
        guard request.iq.payload![attribute: "node"] == nil else {
            throw StanzaError(.itemNotFound, text: "no such node")
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

    /// An `<identity/>` (XEP-0030 §3.1).
    static func identity(category: String, type: String, name: String?) -> Element {
        var identity = Element("identity", namespace: NS.discoInfo, attributes: ["category": category, "type": type])
        if let name { identity[attribute: "name"] = name }
        return identity
    }
}
