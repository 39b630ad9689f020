import XMPPCore

/// XEP-0030: Service Discovery. The domain's info lists the server identity,
/// every feature the installed features advertise and their XEP-0128
/// forms (`Hooks.advertiseForm`); an account's bare
/// JID answers as a registered account, with the identities and features
/// advertised for accounts, to the user and to contacts the user shares
/// presence with (`from` or `both`); to anyone else, and for an unknown
/// account, it is `service-unavailable` (RFC 6121 §8.5.1: the server does
/// not tell a stranger which accounts exist). The domain's items are the
/// services features host at domains of their own (`Hooks.advertiseItem`,
/// such as HTTP upload); an account's items are its PEP nodes (`PEP`).
/// A node of the domain is answered by the feature that owns it
/// (`Hooks.onHostDiscoNode`: the ad-hoc commands).
public struct Disco: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        for feature in [NS.discoInfo, NS.discoItems] {
            hooks.advertise(feature)
            hooks.advertiseOnAccount(feature)
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.host]) { request in
            if let answer = try Self.nodeAnswer(request) { return answer }
            var query = try DiscoAnswer.query(request)
            query.append(DiscoAnswer.identity(category: "server", type: "im", name: "Swiftlet"))
            query = DiscoAnswer.adding(request.server.hooks.discoFeatures, to: query)
            for form in request.server.hooks.discoForms { query.append(form) }
            return .result(query)
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.account]) { request in
            .result(Self.accountInfo(try DiscoAnswer.query(request), hooks: request.server.hooks))
        }
        hooks.onIQ(.get, NS.discoInfo, "query", to: [.user], Self.contactInfo)
        hooks.onIQ(.get, NS.discoItems, "query", to: [.host]) { request in
            if let answer = try Self.nodeAnswer(request) { return answer }
            var query = try DiscoAnswer.query(request)
            for item in request.server.hooks.discoItems {
                var element = Element("item", namespace: NS.discoItems, attributes: ["jid": item.jid])
                if let name = item.name { element[attribute: "name"] = name }
                query.append(element)
            }
            return .result(query)
        }
    }

    /// The answer of the feature that owns the node a query to the server
    /// names (`Hooks.onHostDiscoNode`), or nil for `DiscoAnswer.query` to
    /// answer.
    private static func nodeAnswer(_ request: IQRequest) throws -> IQAnswer? {
        guard let node = request.iq.payload![attribute: "node"],
            let handler = request.server.hooks.hostDiscoNodeHandler(node)
        else { return nil }
        return try handler(request)
    }

    /// disco#info of another user's bare JID: the account's, if the user
    /// shares presence with the requester.
    @Sendable private static func contactInfo(_ request: IQRequest) throws -> IQAnswer {
        guard let username = request.target.localpart, let requester = request.session.jid else {
            throw StanzaError(.serviceUnavailable)
        }
        return .afterStorage({ stores in
            try stores.reaches(username, from: requester)
                && (try stores.roster.item(requester.bare.description, of: username)?.state.sharesPresence ?? false)
        }) { sharesPresence in
            guard sharesPresence else { throw StanzaError(.serviceUnavailable) }
            return .result(Self.accountInfo(try DiscoAnswer.query(request), hooks: request.server.hooks))
        }
    }

    /// `query` as an account answers it: `account/registered`, the
    /// identities and features features advertise on accounts.
    static func accountInfo(_ query: Element, hooks: Hooks) -> Element {
        var query = query
        query.append(DiscoAnswer.identity(category: "account", type: "registered", name: nil))
        for identity in hooks.accountDiscoIdentities {
            query.append(DiscoAnswer.identity(category: identity.category, type: identity.type, name: nil))
        }
        return DiscoAnswer.adding(hooks.accountDiscoFeatures, to: query)
    }
}
