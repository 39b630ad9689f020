import XMPPCore

/// XEP-0215: External Service Discovery, for the STUN and TURN servers of
/// `external_services`, which clients need for calls (Conversations,
/// Dino, Monal and Gajim ask the server's domain), and any other services
/// listed there.
///
/// | request to the domain                                    | answer |
/// |----------------------------------------------------------|--------|
/// | `<services/>` (§3.1), or `<services type='turn'/>`        | every service, or those of the type |
/// | `<credentials><service host type [port]/></credentials>` (§3.3) | the matching services with fresh credentials |
/// | `<credentials/>` without a host and type                  | `bad-request` |
/// | `<credentials/>` for no configured service                | `item-not-found` |
///
/// A service with credentials written in its URI gets `restricted='1'`
/// and those. Other TURN servers get `restricted='1'` and credentials in
/// both answers: the
/// ones coturn's `use-auth-secret` checks (the "TURN REST API" of
/// draft-uberti-behave-turn-rest-00): the username is the expiry time in
/// Unix seconds, `:`, and the user's name; the password is the base64 of
/// HMAC-SHA1 over the username keyed with `turn_secret`; `expires` says
/// when they lapse, `turn_credentials_lifetime` from the request. STUN
/// servers need none. Without services the feature installs nothing, so
/// disco does not list it and the requests get `service-unavailable`.
public struct ExternalServices: ServerFeature {
    private let settings: ServerConfig.ExternalServiceSettings
    private let clock: WallClock

    /// The feature offering `settings`' services; credentials expire
    /// counted from `clock`.
    public init(_ settings: ServerConfig.ExternalServiceSettings, clock: WallClock = .system) {
        self.settings = settings
        self.clock = clock
    }

    public func install(_ hooks: Hooks) {
        guard !settings.services.isEmpty else { return }
        hooks.advertise(NS.extdisco)
        hooks.onIQ(.get, NS.extdisco, "services", to: [.host]) { request in
            let type = request.iq.payload![attribute: "type"]
            let services = settings.services.filter { type == nil || $0.type == type }
            return .result(answer("services", services, for: try request.username()))
        }
        hooks.onIQ(.get, NS.extdisco, "credentials", to: [.host]) { request in
            guard let asked = request.iq.payload!.child("service", namespace: NS.extdisco),
                let host = asked[attribute: "host"], let type = asked[attribute: "type"]
            else { throw StanzaError(.badRequest, text: "name the service by its host and type") }
            let port = asked[attribute: "port"]
            let services = settings.services.filter { service in
                service.hostAttribute == host.lowercased() && service.type == type
                    && (port == nil || port == String(service.port))
            }
            guard !services.isEmpty else { throw StanzaError(.itemNotFound, text: "no such service") }
            return .result(answer("credentials", services, for: try request.username()))
        }
    }

    /// `<name>` with a `<service/>` for each of `services`, TURN servers
    /// with credentials for `username`.
    private func answer(_ name: String, _ services: [ServerConfig.ExternalService], for username: String) -> Element {
        let (seconds, _) = settings.credentialLifetime.components
        let expiry = clock.seconds + Int(seconds)
        let credentials =
            services.contains(where: \.needsCredentials)
            ? TURNCredentials(secret: settings.turnSecret, username: username, expiry: expiry) : nil
        var answer = Element(name, namespace: NS.extdisco)
        for service in services {
            var element = Element(
                "service", namespace: NS.extdisco,
                attributes: [
                    "type": service.type, "host": service.hostAttribute, "port": String(service.port),
                    "transport": service.transport.rawValue,
                ])
            if let fixed = service.fixedCredentials {
                element[attribute: "restricted"] = "1"
                element[attribute: "username"] = fixed.username
                element[attribute: "password"] = fixed.password
            } else if service.needsCredentials, let credentials {
                element[attribute: "restricted"] = "1"
                element[attribute: "username"] = credentials.username
                element[attribute: "password"] = credentials.password
                element[attribute: "expires"] = DateTimeProfile.string(millisecondsSince1970: expiry * 1000)
            }
            answer.append(element)
        }
        return answer
    }
}

/// Time-limited TURN credentials as coturn checks them with
/// `use-auth-secret`: the username is `EXPIRY:USER` (coturn reads the
/// expiry, in Unix seconds, before the first `:`), the password the base64
/// of HMAC-SHA1 over the username, keyed with the shared secret.
struct TURNCredentials: Equatable {
    /// `EXPIRY:USER`.
    let username: String
    /// base64(HMAC-SHA1(secret, username)).
    let password: String

    /// The credentials for `username` valid until `expiry` (Unix seconds).
    init(secret: String, username user: String, expiry: Int) {
        username = "\(expiry):\(user)"
        password = Base64.encode(HashFunction.sha1.hmac(key: Array(secret.utf8), message: Array(username.utf8)))
    }
}

extension ServerConfig.ExternalService {
    /// The host as XEP-0215's `host` gives it: an IPv6 address without
    /// its brackets.
    var hostAttribute: String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
