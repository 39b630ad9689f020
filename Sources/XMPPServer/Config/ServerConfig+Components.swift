import XMPPCore

/// External components (XEP-0114): where they connect, which may, and
/// with which secret; with the value form and checks of the
/// `component_*` keys and `components`.
extension ServerConfig {
    /// The component listener and the components it accepts. Off (no
    /// listener) by default.
    public struct Components: Sendable, Equatable {
        /// Addresses where components connect (`jabber:component:accept`
        /// streams, XEP-0114). Key `component_listen`, default none (off).
        /// Loopback only unless `allowRemote`.
        public var listen: [ListenAddress] = []
        /// Whether `listen` may name addresses other than loopback. XEP-0114
        /// streams have no TLS: the handshake hashes the secret, but every
        /// stanza goes in plaintext. Key `component_allow_remote`, default no.
        public var allowRemote = false
        /// The components and their secrets. Key `components`, default none.
        public var services: [Component] = []
    }

    /// One component: its address and the secret it proves it knows in the
    /// handshake (XEP-0114 §3). Written `NAME=SECRET`: a `NAME` without a
    /// dot is a subdomain of the served domain (`gateway` is
    /// `gateway.localhost`), one with a dot a whole domain. Validation
    /// replaces a subdomain by the whole domain.
    public struct Component: Sendable, Equatable {
        /// The component's domain (before validation, maybe a subdomain label).
        public var domain: String
        /// The shared secret; `check-config` and the logs never show it.
        public var secret: String

        /// A component at `domain` with `secret`.
        public init(domain: String, secret: String) {
            self.domain = domain
            self.secret = secret
        }

        static let expectation = "NAME=SECRET, such as gateway=s3cret for gateway.<domain>"

        /// Reads `NAME=SECRET`.
        static func parse(_ text: String) throws(ConfigValueError) -> Component {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex,
                text.index(after: equals) != text.endIndex
            else { throw ConfigValueError("expected \(expectation); got an item without a name or a secret") }
            return Component(domain: String(text[..<equals]), secret: String(text[text.index(after: equals)...]))
        }
    }

    /// The component domains, as validation resolved them.
    public var componentDomains: [String] { components.services.map(\.domain) }

    /// Checks the component keys; makes each component's domain whole and
    /// normalized.
    mutating func checkComponents() throws(ConfigError) {
        let taken = [domain, mucService] + (upload.enabled ? uploadServiceAddresses : [])
        var seen: Set<String> = []
        for index in components.services.indices {
            let name = components.services[index].domain
            let whole = name.contains(".") ? name : "\(name).\(domain)"
            let resolved: String
            do {
                resolved = try ConfigValueType<String>.domain.parse(whole)
            } catch {
                throw ConfigError(key: "components", error.message)
            }
            if taken.contains(resolved) {
                throw ConfigError(
                    key: "components", "\(resolved) is taken by the domain, group chat or upload; choose another name")
            }
            if !seen.insert(resolved).inserted {
                throw ConfigError(key: "components", "\(resolved) is listed twice")
            }
            components.services[index].domain = resolved
        }
        if !components.listen.isEmpty, components.services.isEmpty {
            throw ConfigError(key: "component_listen", "is set, but components lists none that may connect")
        }
        if !components.allowRemote, let exposed = components.listen.first(where: { !$0.isLoopback }) {
            throw ConfigError(
                key: "component_listen",
                "\(exposed) is not loopback; component streams have no TLS, so set component_allow_remote = yes "
                    + "only on a network you trust")
        }
    }

    /// The warning for component listeners beyond loopback, if any.
    var componentWarnings: [String] {
        let exposed = components.listen.filter { !$0.isLoopback }
        guard !exposed.isEmpty else { return [] }
        return [
            "components connect in plaintext on \(exposed.map(\.description).joined(separator: ", ")), "
                + "not loopback: their stanzas can be read on the way"
        ]
    }
}

extension ConfigValueType where Value == ServerConfig.Component {
    /// `gateway=SECRET`; written back as `gateway.localhost=(hidden)`.
    static let component = ConfigValueType(
        expected: ServerConfig.Component.expectation, emptyValue: nil, parse: ServerConfig.Component.parse,
        format: { "\($0.domain)=(hidden)" })
}
