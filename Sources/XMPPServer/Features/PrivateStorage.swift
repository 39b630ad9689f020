import XMPPCore
import XMPPStorage

/// XEP-0049: Private XML Storage. A user keeps arbitrary elements on the
/// server, one per qualified name (namespace and local name), which only
/// the user's own resources can read or change.
///
/// | request (`<query xmlns='jabber:iq:private'>`)   | answer                                       |
/// |-------------------------------------------------|----------------------------------------------|
/// | get, one child element                          | the stored element, or the child as it came when none is stored |
/// | set, one child element                          | stored, replacing the one of the same name; an empty element (no attributes, no content) removes it |
/// | no child, or more than one                      | `not-acceptable` (§2.3; Prosody refuses more than one too) |
/// | a child in `jabber:client` (no namespace of its own), `jabber:server` or `jabber:iq:private` | `not-acceptable` (§2.3: reserved) |
/// | set over `private_storage_max_size`             | `not-acceptable`                             |
/// | set of a new element beyond `private_storage_max_elements` | `resource-constraint`             |
/// | get or set to another user's bare JID           | `forbidden` (§2.3: "preferable")             |
///
/// XEP-0048 bookmarks (`<storage xmlns='storage:bookmarks'/>`) are not
/// kept here but in the PEP node of XEP-0402 (`BookmarksConversion`), so
/// that old and new clients share one set.
public struct PrivateStorage: ServerFeature {
    /// Namespaces no stored element may have: the stream's own (an element
    /// sent without a namespace of its own inherits `jabber:client`) and
    /// this protocol's.
    static let reservedNamespaces: Set<String> = [NS.client, NS.server, NS.privateStorage]

    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.privateStorage)
        hooks.advertiseOnAccount(NS.privateStorage)
        hooks.onIQ(.get, NS.privateStorage, "query", to: [.account], Self.get)
        hooks.onIQ(.set, NS.privateStorage, "query", to: [.account], Self.set)
        for type in [IQ.IQType.get, .set] {
            hooks.onIQ(type, NS.privateStorage, "query", to: [.user]) { _ in
                throw StanzaError(.forbidden, text: "private XML is only its owner's")
            }
        }
    }

    @Sendable private static func get(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let child = try Self.child(of: request)
        if BookmarksConversion.isLegacyStorage(child) { return try BookmarksConversion.get(request) }
        return .afterStorage({ stores in
            try stores.privateXML.element(namespace: child.namespace, name: child.name, of: username)
        }) { xml in
            guard let xml else { return .result(query(child)) }
            guard let stored = StoredStanza.parse(xml) else {
                throw DamagedRecord(description: "the private XML {\(child.namespace)}\(child.name) of \(username) does not parse")
            }
            return .result(query(stored))
        }
    }

    @Sendable private static func set(_ request: IQRequest) throws -> IQAnswer {
        let username = try request.username()
        let child = try Self.child(of: request)
        if BookmarksConversion.isLegacyStorage(child) { return try BookmarksConversion.set(child, request) }
        let (namespace, name) = (child.namespace, child.name)
        guard !(child.attributes.isEmpty && child.children.isEmpty) else {
            return .afterStorage({ stores in
                try stores.privateXML.removeElement(namespace: namespace, name: name, of: username)
            }) { .result() }
        }
        let limits = request.server.config.limits
        guard let xml = StoredStanza.serialize(child) else {
            throw StanzaError(.badRequest, text: "the element cannot be stored")
        }
        guard xml.utf8.count <= limits.privateStorageMaxSize else {
            throw StanzaError(.notAcceptable, text: "a private element may have at most \(limits.privateStorageMaxSize) bytes")
        }
        let maxElements = limits.privateStorageMaxElements
        return .afterStorage({ stores in
            try stores.inTransaction {
                let isNew = try stores.privateXML.element(namespace: namespace, name: name, of: username) == nil
                if isNew, try stores.privateXML.elementCount(of: username) >= maxElements {
                    throw StanzaError(.resourceConstraint, text: "at most \(maxElements) private elements may be stored")
                }
                try stores.privateXML.setElement(xml, namespace: namespace, name: name, of: username)
            }
        }) { .result() }
    }

    /// The one element the request's `<query/>` holds (§2.3).
    private static func child(of request: IQRequest) throws(StanzaError) -> Element {
        let elements = request.iq.payload!.elements
        guard elements.count == 1, let child = elements.first else {
            throw StanzaError(.notAcceptable, text: "the query holds exactly one element")
        }
        guard !reservedNamespaces.contains(child.namespace) else {
            throw StanzaError(.notAcceptable, text: "the namespace \(child.namespace) is reserved")
        }
        return child
    }

    /// `<query xmlns='jabber:iq:private'>` around `element`.
    static func query(_ element: Element) -> Element {
        Element("query", namespace: NS.privateStorage, children: [.element(element)])
    }
}
