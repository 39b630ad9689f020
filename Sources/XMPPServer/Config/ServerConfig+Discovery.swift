/// The settings the server publishes for discovery by clients: contact
/// addresses (XEP-0157) and STUN/TURN services (XEP-0215), with their
/// value forms and checks.
extension ServerConfig {
    /// How to reach the people who run the service (XEP-0157), each a list
    /// of URIs such as `mailto:abuse@example.com` or
    /// `xmpp:admin@example.com`. The server's disco#info carries the kinds
    /// that are set; with none set it carries nothing.
    public struct Contact: Sendable, Equatable {
        /// Where to report abuse by the service's users. Key
        /// `contact_abuse`, default none.
        public var abuse: [String] = []
        /// The service's administrators. Key `contact_admin`, default none.
        public var admin: [String] = []
        /// Where to send feedback. Key `contact_feedback`, default none.
        public var feedback: [String] = []
        /// Sales enquiries. Key `contact_sales`, default none.
        public var sales: [String] = []
        /// Where to report security problems. Key `contact_security`,
        /// default none.
        public var security: [String] = []
        /// Where the service's status is published. Key `contact_status`,
        /// default none.
        public var status: [String] = []
        /// Help for users. Key `contact_support`, default none.
        public var support: [String] = []

        /// The kinds that are set, by name (`abuse`, the key's end), in
        /// alphabetical order.
        public var kinds: [(name: String, addresses: [String])] {
            [
                ("abuse", abuse), ("admin", admin), ("feedback", feedback), ("sales", sales),
                ("security", security), ("status", status), ("support", support),
            ].filter { !$0.1.isEmpty }
        }
    }

    /// STUN and TURN servers that clients use for audio and video calls
    /// through NATs, and other services clients may look up (XEP-0215).
    public struct ExternalServiceSettings: Sendable, Equatable {
        /// The services clients are told about. Key `external_services`,
        /// default none (the feature is not offered).
        public var services: [ExternalService] = []
        /// The secret the TURN servers share with this server (coturn's
        /// `static-auth-secret` with `use-auth-secret`), from which each
        /// user gets time-limited credentials. Key `turn_secret`, default
        /// empty; needed when `services` lists TURN servers. `check-config`
        /// never prints it.
        public var turnSecret = ""
        /// How long such credentials stay valid. Key
        /// `turn_credentials_lifetime`, default 1d, from 1m to 30d.
        public var credentialLifetime = Duration.seconds(86_400)
    }

    /// One external service, written as the URIs of RFC 7064 and RFC 7065
    /// write STUN and TURN servers: `turn:turn.example.com:3478?transport=udp`
    /// (STUN URIs take the `transport` too, for XEP-0215's attribute). Any
    /// other scheme names another XEP-0215 type, such as
    /// `ftp://files.example.com:21`, and needs its port. A username and
    /// password before the host (`turn:alice:secret@turn.example.com`) are
    /// given to every user as they are, instead of time-limited TURN
    /// credentials; neither may hold `:`, `@` or `,`.
    public struct ExternalService: Sendable, Equatable, CustomStringConvertible {
        /// The transport clients reach the server by.
        public enum Transport: String, Sendable, CaseIterable {
            /// UDP (DTLS for `stuns` and `turns`).
            case udp
            /// TCP (TLS for `stuns` and `turns`).
            case tcp
        }

        /// A username and password every user is told.
        public struct FixedCredentials: Sendable, Equatable {
            public var username: String
            public var password: String
        }

        /// XEP-0215's `type`: the URI's scheme, lowercased (`stun`,
        /// `stuns`, `turn`, `turns`, or another such as `ftp`).
        public var type: String
        /// A host name, an IPv4 address, or an IPv6 address in brackets.
        public var host: String
        /// The port.
        public var port: Int
        /// `?transport=`; without it UDP for `stun` and `turn`, TCP for
        /// the others (RFC 7065 §3.2).
        public var transport: Transport
        /// The credentials written in the URI, if any.
        public var fixedCredentials: FixedCredentials?

        /// Whether users get time-limited credentials from `turn_secret`:
        /// TURN's relays need credentials, and none are written here.
        public var needsCredentials: Bool { fixedCredentials == nil && Self.relays.contains(type) }

        /// `type:host:port?transport=…`, every part spelt out, a fixed
        /// password shown as `(hidden)`.
        public var description: String {
            let credentials = fixedCredentials.map { "\($0.username):(hidden)@" } ?? ""
            return "\(type):\(credentials)\(host):\(port)?transport=\(transport.rawValue)"
        }

        /// RFC 7064 §3.2 and RFC 7065 §3.2.
        static let defaultPorts = ["stun": 3478, "turn": 3478, "stuns": 5349, "turns": 5349]
        static let relays: Set = ["turn", "turns"]

        /// Reads `type:[//][user:password@]host[:port][?transport=udp|tcp]`.
        static func parse(_ text: String) throws(ConfigValueError) -> ExternalService {
            let schemeEnd = text.firstIndex(of: ":") ?? text.endIndex
            let type = text[..<schemeEnd].lowercased()
            guard let first = type.first, first.isLetter, schemeEnd < text.endIndex,
                type.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
            else { throw ConfigValueError(expected: expectation, got: text) }
            var rest = text[text.index(after: schemeEnd)...]
            if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
            var transport = type == "stun" || type == "turn" ? Transport.udp : .tcp
            if let question = rest.firstIndex(of: "?") {
                let query = rest[rest.index(after: question)...].lowercased()
                guard query.hasPrefix("transport="), let given = Transport(rawValue: String(query.dropFirst(10))) else {
                    throw ConfigValueError("only ?transport=udp or ?transport=tcp may follow the port in '\(text)'")
                }
                transport = given
                rest = rest[..<question]
            }
            var fixedCredentials: FixedCredentials?
            if let at = rest.firstIndex(of: "@") {
                let userinfo = rest[..<at].split(separator: ":", omittingEmptySubsequences: false)
                guard userinfo.count == 2, !userinfo[0].isEmpty, !userinfo[1].isEmpty else {
                    throw ConfigValueError("write the credentials in '\(text)' as user:password@ before the host")
                }
                fixedCredentials = FixedCredentials(username: String(userinfo[0]), password: String(userinfo[1]))
                rest = rest[rest.index(after: at)...]
            }
            var port = defaultPorts[type]
            // The port follows the last ':', after an IPv6 address's ']'.
            if let portColon = rest.lastIndex(of: ":"), portColon > (rest.lastIndex(of: "]") ?? rest.startIndex) {
                guard let given = wholeNumber(rest[rest.index(after: portColon)...]), (1...65535).contains(given) else {
                    throw ConfigValueError("the port in '\(text)' must be a number from 1 to 65535")
                }
                port = given
                rest = rest[..<portColon]
            }
            guard let port else { throw ConfigValueError("'\(text)' needs a port: \(type) has no default one") }
            let host = try ConfigValueType<String>.domain.parse(String(rest))
            return ExternalService(
                type: type, host: host, port: port, transport: transport, fixedCredentials: fixedCredentials)
        }

        static let expectation = "a service URI such as turn:turn.example.com:3478?transport=udp"
    }

    /// Checks the external services' settings.
    func checkExternalServices() throws(ConfigError) {
        try require(
            externalServices.credentialLifetime, in: .seconds(60)...(.seconds(30 * 86_400)),
            key: "turn_credentials_lifetime", format)
        if externalServices.turnSecret.isEmpty, let turn = externalServices.services.first(where: \.needsCredentials) {
            throw ConfigError(
                key: "turn_secret",
                "is empty, but external_services lists the TURN server \(turn); "
                    + "set it to the TURN server's shared secret (coturn: static-auth-secret)")
        }
    }
}

extension ConfigValueType where Value == String {
    /// A URI with a scheme, such as `mailto:admin@example.com`,
    /// `xmpp:admin@example.com` or `https://example.com/support`.
    static let uri = ConfigValueType(
        expected: uriExpectation, emptyValue: nil,
        parse: { text throws(ConfigValueError) in
            let scheme = text.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
            guard let first = scheme.first, first.isLetter, text.dropFirst(scheme.count).first == ":",
                text.count > scheme.count + 1, !text.contains(where: { $0.isWhitespace || $0.isNewline })
            else { throw ConfigValueError(expected: uriExpectation, got: text) }
            return text
        },
        format: ConfigFile.formatted)

    private static let uriExpectation = "a URI such as mailto:admin@example.com or xmpp:admin@example.com"

    /// A secret: any text, which `check-config` shows as `(hidden)`.
    static let secret = ConfigValueType(
        expected: "text", emptyValue: "", parse: { $0 }, format: { $0.isEmpty ? "" : "(hidden)" })
}

extension ConfigValueType where Value == ServerConfig.ExternalService {
    /// `turn:turn.example.com:3478?transport=udp` (`ExternalService.parse`).
    static let externalService = ConfigValueType(
        expected: ServerConfig.ExternalService.expectation, emptyValue: nil,
        parse: ServerConfig.ExternalService.parse, format: \.description)
}
