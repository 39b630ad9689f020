import Foundation
import XMPPClient
import XMPPCore

extension GlobalOptions {
    /// The wait for the server when `--timeout` is not given.
    public static let defaultTimeout: Duration = .seconds(15)

    /// The client configuration for `jid`: the server, port and TLS policy
    /// of these options, else those saved at login, else the JID's domain,
    /// port 5222 and `require`.
    ///
    /// - Parameters:
    ///   - runsUntilStopped: Whether the command stays online (listen,
    ///     presence, chat): it then reconnects after a drop, and `--timeout`
    ///     bounds the run, so the wait for any one answer is at most the
    ///     default. A one-shot command fails at the first drop instead.
    public func configuration(
        for jid: JID, secret: ClientSecret, saved: SavedCredentials?, storePath: String?, runsUntilStopped: Bool
    ) -> ClientConfiguration {
        var configuration = ClientConfiguration(jid: jid, secret: secret)
        if let server {
            configuration.host = server.host
            configuration.port = server.port ?? configuration.port
        } else if let saved {
            configuration.host = saved.host
            configuration.port = saved.port.map { UInt16($0) } ?? configuration.port
        }
        configuration.tls = tls ?? saved?.tls ?? .requireValid
        // The server issued the saved FAST token to this id.
        if let id = saved?.userAgentID { configuration.userAgentID = id }
        // Commands run side by side (listen in one terminal, send in
        // another): a tag of its own keeps each from replacing the other's
        // session, as a server-picked resource did before Bind 2.
        configuration.bindTag = "swiftlet-" + UUID().uuidString.prefix(8).lowercased()
        configuration.resource = resource
        configuration.storePath = storePath
        let timeout = timeout ?? Self.defaultTimeout
        configuration.timeout = runsUntilStopped ? min(timeout, Self.defaultTimeout) : timeout
        configuration.reconnect.isEnabled = runsUntilStopped
        // Only a command that stays online is seen in the rooms it joins.
        configuration.joinsBookmarkedRooms = runsUntilStopped
        return configuration
    }
}

extension SavedCredentials {
    /// What `login` saves after logging in with `configuration`: its
    /// account, server, TLS policy and user-agent id, and the keys and FAST
    /// token of `login`. The port is left out when it is the default.
    public init(configuration: ClientConfiguration, login: SavedLogin) {
        let defaultPort = ClientConfiguration(jid: configuration.jid, secret: configuration.secret).port
        self.init(
            jid: configuration.jid, mechanism: login.mechanism, keys: login.keys, host: configuration.host,
            port: configuration.port == defaultPort ? nil : Int(configuration.port), tls: configuration.tls,
            fastToken: login.fastToken, userAgentID: configuration.userAgentID)
    }
}
