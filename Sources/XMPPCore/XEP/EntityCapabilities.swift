/// XEP-0115 Entity Capabilities: the `<c xmlns='http://jabber.org/protocol/caps'/>`
/// an entity puts in its presence, naming its disco#info by a hash of it.
public struct EntityCapabilities: Sendable, Hashable {
    /// The `hash` attribute, such as `sha-1`; nil in the legacy format
    /// (before version 1.5), whose `ver` is no hash and cannot be verified.
    public var hash: String?
    /// The `node` attribute: the software's URI.
    public var node: String
    /// The `ver` attribute: the verification string's hash, in base64.
    public var ver: String

    /// Capabilities from their attributes.
    public init(hash: String?, node: String, ver: String) {
        self.hash = hash
        self.node = node
        self.ver = ver
    }

    /// The capabilities in `presence`'s `<c/>`, or nil when it has none
    /// (or one without `node` or `ver`).
    public init?(presence: Element) {
        guard let c = presence.child("c", namespace: NS.caps), let node = c[attribute: "node"],
            let ver = c[attribute: "ver"], !node.isEmpty, !ver.isEmpty
        else { return nil }
        self.init(hash: c[attribute: "hash"], node: node, ver: ver)
    }

    /// The `<c/>` element.
    public var element: Element {
        var c = Element("c", namespace: NS.caps, attributes: ["node": node, "ver": ver])
        c[attribute: "hash"] = hash
        return c
    }

    /// The disco#info node that describes these capabilities, `node#ver`
    /// (§6.2).
    public var discoNode: String { node + "#" + ver }

    /// Whether `info`, a disco#info `<query/>`, hashes to `ver` with `hash`
    /// (§5.4): false for a hash function Swiftlet lacks, the legacy
    /// format, and an ill-formed `info`.
    public func isVerified(by info: Element) -> Bool {
        guard let hash, let function = HashFunction(rawValue: hash.lowercased()),
            let computed = Self.ver(of: info, using: function)
        else { return false }
        return computed == ver
    }

    /// The `ver` of a disco#info `<query/>`: the base64 of `function` over
    /// its verification string (§5.1), or nil when §5.4 calls it ill-formed
    /// (a repeated identity or feature, two forms with one `FORM_TYPE`, a
    /// form with several `FORM_TYPE` fields or values).
    public static func ver(of info: Element, using function: HashFunction) -> String? {
        verificationString(of: info).map { Base64.encode(function.hash(Array($0.utf8))) }
    }

    /// The verification string of a disco#info `<query/>` (§5.1), or nil
    /// when it is ill-formed (§5.4).
    public static func verificationString(of info: Element) -> String? {
        let identities = info.elements.filter { $0.name == "identity" && $0.namespace == NS.discoInfo }.map { identity in
            ["category", "type"].map { identity[attribute: $0] ?? "" } + [
                identity[attribute: "lang", namespace: NS.xml] ?? "", identity[attribute: "name"] ?? "",
            ]
        }
        let features = info.elements.filter { $0.name == "feature" && $0.namespace == NS.discoInfo }.map {
            $0[attribute: "var"] ?? ""
        }
        guard Set(identities).count == identities.count, Set(features).count == features.count else { return nil }
        var forms: [(type: String, fields: [DataForm.Field])] = []
        for form in info.elements.compactMap(DataForm.init) {
            let typeFields = form.fields.filter { $0.name == "FORM_TYPE" }
            guard typeFields.count <= 1, Set(typeFields.first?.values ?? []).count <= 1 else { return nil }
            // §5.4: a form without a hidden FORM_TYPE is ignored.
            guard let typeField = typeFields.first, typeField.type == "hidden", let type = typeField.values.first
            else { continue }
            forms.append((type, form.fields.filter { $0.name != "FORM_TYPE" }))
        }
        guard Set(forms.map(\.type)).count == forms.count else { return nil }

        var string = ""
        for identity in identities.sorted(by: { octetsPrecede($0.prefix(3), $1.prefix(3)) }) {
            string += identity.joined(separator: "/") + "<"
        }
        for feature in features.sorted(by: octetsPrecede) { string += feature + "<" }
        for form in forms.sorted(by: { octetsPrecede($0.type, $1.type) }) {
            string += form.type + "<"
            for field in form.fields.sorted(by: { octetsPrecede($0.name ?? "", $1.name ?? "") }) {
                string += (field.name ?? "") + "<"
                for value in field.values.sorted(by: octetsPrecede) { string += value + "<" }
            }
        }
        return string
    }

    /// "i;octet" order (RFC 4790 §9.3), which §5.1 sorts by.
    private static func octetsPrecede(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Compares lists of strings element by element in octet order.
    private static func octetsPrecede(_ a: ArraySlice<String>, _ b: ArraySlice<String>) -> Bool {
        a.lexicographicallyPrecedes(b, by: octetsPrecede)
    }
}
