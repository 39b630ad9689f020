import XMPPCore

/// XEP-0092: Software Version, of the server: name Swiftlet, the release
/// version and the operating system, or less as `version_reply` says
/// (`off` installs nothing, so the query gets the router's
/// `service-unavailable` and disco does not list the feature).
///
/// A query to a user's full JID is routed to that client, which answers
/// for itself; one to a bare JID gets `service-unavailable` (RFC 6121
/// §8.5.1), since an account has no software.
public struct SoftwareVersion: ServerFeature {
    private let reply: ServerConfig.VersionReply

    public init(reply: ServerConfig.VersionReply) {
        self.reply = reply
    }

    public func install(_ hooks: Hooks) {
        guard reply != .off else { return }
        hooks.advertise(NS.version)
        let query = Self.query(reply)
        hooks.onIQ(.get, NS.version, "query", to: [.host]) { _ in .result(query) }
    }

    /// The answer: `<name/>`, then `<version/>` and `<os/>` when `full`.
    static func query(_ reply: ServerConfig.VersionReply) -> Element {
        var query = Element("query", namespace: NS.version)
        query.append(Element("name", namespace: NS.version, children: [.text("Swiftlet")]))
        if reply == .full {
            query.append(Element("version", namespace: NS.version, children: [.text(Swiftlet.version)]))
            query.append(Element("os", namespace: NS.version, children: [.text(operatingSystem)]))
        }
        return query
    }

    /// The system's name only: its release would tell an attacker more
    /// than a client needs.
    private static var operatingSystem: String {
        #if os(Linux)
            "Linux"
        #elseif os(macOS)
            "macOS"
        #else
            "unknown"
        #endif
    }
}
