import Foundation
import XMPPCore
import XMPPStorage

/// XEP-0012: Last Activity.
///
/// | `to`                      | answer                                                          |
/// |---------------------------|-----------------------------------------------------------------|
/// | the domain                | the server's uptime in seconds (§5), no text                    |
/// | none, or own bare JID     | `seconds='0'` while a resource is available (§3), else the seconds since the last logout, with its status as text |
/// | another user's bare JID   | the same, for a requester the user shares presence with (a `from` or `both` subscription); others get `forbidden` (§3), and an unknown account or one that blocks the requester `service-unavailable` |
/// | a full JID                | routed to that client, which answers for itself (§4)            |
///
/// A logout is when the user's last available resource goes unavailable,
/// by unavailable presence (whose `<status/>` is kept) or by the end of
/// its session (no status); `PresenceBroadcast` fires `LastUnavailable`
/// for both. A user never seen going offline gets `item-not-found`.
public struct LastActivity: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise(NS.last)
        hooks.advertiseOnAccount(NS.last)
        hooks.onIQ(.get, NS.last, "query", to: [.host]) { request in
            let uptime = request.server.started.duration(to: request.server.loop.now)
            return .result(Self.query(seconds: Int(uptime.components.seconds), status: nil))
        }
        hooks.onIQ(.get, NS.last, "query", to: [.account, .user], Self.user)
        hooks.on(LastUnavailable.self, Self.recordLogout)
    }

    @Sendable private static func user(_ request: IQRequest) throws -> IQAnswer {
        let session = request.session
        let user = request.target
        guard let username = user.localpart, let requester = session.jid else { throw StanzaError(.serviceUnavailable) }
        let isOwn = requester.localpart == username
        return .afterStorage({ stores in
            guard try stores.reaches(username, from: requester) else { throw StanzaError(.serviceUnavailable) }
            if !isOwn {
                let item = try stores.roster.item(requester.bare.description, of: username)
                guard item?.state.subscription.includesFrom == true else {
                    throw StanzaError(.forbidden, text: "you are not subscribed to this user's presence")
                }
            }
            return try stores.lastActivity.lastLogout(of: username)
        }) { logout in
            if !session.server.sessions.availableSessions(of: user).isEmpty { return .result(query(seconds: 0, status: nil)) }
            guard let logout else { throw StanzaError(.itemNotFound, text: "no logout recorded") }
            let seconds = max(0, Int(Date().timeIntervalSince1970) - logout.timestamp)
            return .result(query(seconds: seconds, status: logout.status))
        }
    }

    private static func query(seconds: Int, status: String?) -> Element {
        var query = Element("query", namespace: NS.last, attributes: ["seconds": String(seconds)])
        if let status, !status.isEmpty { query.append(text: status) }
        return query
    }

    /// Records that a user has just gone offline, with the status it left.
    @Sendable private static func recordLogout(_ event: LastUnavailable) {
        let server = event.server
        guard let username = event.user.localpart else { return }
        let logout = LastLogout(timestamp: Int(Date().timeIntervalSince1970), status: event.status)
        server.storage.run(on: server.loop, { stores in try stores.lastActivity.setLastLogout(logout, of: username) }) {
            result in
            switch result {
            case .success, .failure(is UnknownAccountError):
                break  // the account was deleted, which ended the session
            case .failure(let error):
                server.log.error("recording the logout of \(username) failed: \(error)")
            }
        }
    }
}
