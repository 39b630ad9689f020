import XMPPCore

/// XEP-0199: XMPP Ping. Answers pings to the server and, on the account's
/// behalf, to a user's own bare JID (XMPPFramework pings with no `to`).
public struct Ping: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.ping)
        hooks.onIQ(.get, NS.ping, "ping", to: [.host, .account]) { request in
            .result()
        }
    }
}
