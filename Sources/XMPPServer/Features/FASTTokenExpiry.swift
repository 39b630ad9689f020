import XMPPCore

/// Forgets FAST tokens (XEP-0484) once they expire: at start, then every
/// hour. An expired token never logs in anyway; this keeps the table to
/// the clients that can still use theirs.
public struct FASTTokenExpiry: ServerFeature {
    /// How often expired tokens are looked for.
    static let interval = Duration.seconds(3600)

    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.onStart { server in Self.purge(server) }
    }

    private static func purge(_ server: ServerContext) {
        let (now, log) = (server.wallClock.date, server.log)
        server.storage.submit({ stores in try stores.fastTokens.removeExpired(at: now) }) { result in
            switch result {
            case .success(let removed):
                if removed > 0 { log.info("FAST tokens: forgot \(removed) expired") }
            case .failure(let error):
                log.error("FAST token expiry failed: \(error)")
            }
        }
        _ = server.loop.scheduleTimer(after: interval) { purge(server) }
    }
}
