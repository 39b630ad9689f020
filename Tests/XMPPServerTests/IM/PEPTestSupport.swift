import XMPPCore
import XMPPServer
import XMPPTestSupport

/// A client's XEP-0115 capabilities for PEP tests: a disco#info wanting
/// the notifications of `nodes`, and its `ver`.
struct TestCaps {
    static let node = "https://swiftlet.test/client"
    let info: String
    let ver: String

    /// Capabilities with `NODE+notify` for each of `nodes`; a `ver` of
    /// `claimed` instead of the true hash makes them unverifiable.
    init(notify nodes: [String], claimed: String? = nil) {
        var features = [NS.discoInfo, NS.caps]
        for node in nodes { features += [node, node + "+notify"] }
        info = "<query xmlns='\(NS.discoInfo)'><identity category='client' type='pc' name='Test'/>"
            + features.map { "<feature var='\($0)'/>" }.joined() + "</query>"
        let parser = XMLStreamParser()
        _ = parser.feed("<stream xmlns='jabber:client'>")
        guard case .element(let query)? = parser.feed(info).first else { fatalError("bad disco#info") }
        ver = claimed ?? EntityCapabilities.ver(of: query, using: .sha1)!
    }

    /// The `<c/>` to put in presence.
    var element: String {
        "<c xmlns='\(NS.caps)' hash='sha-1' node='\(Self.node)' ver='\(ver)'/>"
    }
}

extension TestClient {
    /// Sends available presence with `caps`, answers each disco#info
    /// query for them that comes (its account's service and its
    /// contacts'), as clients do, and returns everything else received
    /// meanwhile.
    @discardableResult
    func announce(_ caps: TestCaps) -> [Element] {
        send("<presence>\(caps.element)</presence>")
        var pending = receiveElements()
        var received: [Element] = []
        while !pending.isEmpty {
            let element = pending.removeFirst()
            guard element.name == "iq", element.child("query", namespace: NS.discoInfo) != nil else {
                received.append(element)
                continue
            }
            send(
                "<iq type='result' to='\(element[attribute: "from"] ?? "")' id='\(element[attribute: "id"] ?? "")'>"
                    + caps.info.replacingOccurrences(
                        of: "<query xmlns='\(NS.discoInfo)'>",
                        with: "<query xmlns='\(NS.discoInfo)' node='\(TestCaps.node)#\(caps.ver)'>") + "</iq>")
            pending += receiveElements()
        }
        return received
    }

    /// Publishes `payload` to `node`, with an item id and publish-options
    /// fields if given, and returns the reply.
    func publish(_ payload: String, to node: String, id: String? = nil, options: [String: String] = [:]) -> Element? {
        request(Self.publishing(payload, to: node, id: id, options: options), id: "pub")
    }

    /// The publish request of `publish(_:to:id:options:)`, id `pub`.
    static func publishing(_ payload: String, to node: String, id: String? = nil, options: [String: String] = [:]) -> String {
        let item = id.map { "<item id='\($0)'>" } ?? "<item>"
        var form = ""
        if !options.isEmpty {
            form = "<publish-options><x xmlns='jabber:x:data' type='submit'>"
                + "<field var='FORM_TYPE' type='hidden'><value>\(NS.pubsubPublishOptions)</value></field>"
                + options.map { "<field var='\($0.key)'><value>\($0.value)</value></field>" }.joined()
                + "</x></publish-options>"
        }
        return "<iq type='set' id='pub'><pubsub xmlns='\(NS.pubsub)'><publish node='\(node)'>\(item)\(payload)</item></publish>\(form)</pubsub></iq>"
    }

    /// Submits a `pubsub#node_config` form with `fields` for the node
    /// `node` of the client's account and returns the reply.
    func configure(_ node: String, _ fields: [String: String], to owner: String? = nil) -> Element? {
        let form = "<x xmlns='jabber:x:data' type='submit'>"
            + "<field var='FORM_TYPE' type='hidden'><value>\(NS.pubsubNodeConfig)</value></field>"
            + fields.sorted { $0.key < $1.key }.map { "<field var='\($0.key)'><value>\($0.value)</value></field>" }.joined()
            + "</x>"
        let to = owner.map { " to='\($0)'" } ?? ""
        return request(
            "<iq type='set' id='conf'\(to)><pubsub xmlns='\(NS.pubsubOwner)'><configure node='\(node)'>\(form)</configure></pubsub></iq>",
            id: "conf")
    }

    /// The `pubsub#node_config` form of the node `node` of the client's
    /// account, by field name (the first value of each).
    func configuration(of node: String) -> [String: String]? {
        let reply = request(
            "<iq type='get' id='confget'><pubsub xmlns='\(NS.pubsubOwner)'><configure node='\(node)'/></pubsub></iq>",
            id: "confget")
        guard let form = reply?.child("pubsub", namespace: NS.pubsubOwner)?.child("configure", namespace: NS.pubsubOwner)?
            .child("x", namespace: NS.dataForms).flatMap(DataForm.init)
        else { return nil }
        return Dictionary(form.fields.compactMap { field in field.name.map { ($0, field.values.first ?? "") } }) { first, _ in first }
    }

    /// Asks `owner`'s PEP service for the items of `node`.
    func items(of node: String, at owner: String, extra: String = "", children: String = "") -> Element? {
        request(
            "<iq type='get' id='items' to='\(owner)'><pubsub xmlns='\(NS.pubsub)'><items node='\(node)'\(extra)>\(children)</items></pubsub></iq>",
            id: "items")
    }
}

extension Element {
    /// The XEP-0060 application condition (in `pubsub#errors`) of this error stanza.
    var pubsubCondition: String? {
        child("error")?.elements.first { $0.namespace == NS.pubsubErrors }?.name
    }

    /// The `feature` of the `<unsupported/>` condition of this error stanza.
    var unsupportedFeature: String? {
        child("error")?.child("unsupported", namespace: NS.pubsubErrors)?[attribute: "feature"]
    }

    /// The ids of the items of a pubsub reply or event notification.
    var pubsubItemIDs: [String] {
        let namespace = name == "message" ? NS.pubsubEvent : NS.pubsub
        let container = name == "message" ? child("event", namespace: namespace) : child("pubsub", namespace: namespace)
        return container?.child("items", namespace: namespace)?.elements.filter { $0.name == "item" }.compactMap {
            $0[attribute: "id"]
        } ?? []
    }
}
