import Foundation
import XMPPCore
import XMPPNet

/// What a client proves it is the account's owner with.
public enum ClientSecret: Sendable, Hashable {
    /// The password. It stays in memory only; after a SCRAM login,
    /// ``XMPPClient/savedLogin`` holds what to save instead.
    case password(String)
    /// Keys saved from an earlier SCRAM login (no password needed or kept).
    case saved(SavedLogin)
}

/// Everything an ``XMPPClient`` needs to know before connecting.
public struct ClientConfiguration: Sendable {
    /// The account, as a bare JID such as `alice@example.com`.
    public var jid: JID
    /// The password or saved keys.
    public var secret: ClientSecret
    /// The host to connect to; by default the JID's domain. An IP address
    /// or a name (no DNS SRV lookup is made).
    public var host: String?
    /// The TCP port; 5222 by default.
    public var port: UInt16 = 5222
    /// How the connection is opened: TCP by default; tests connect to an
    /// in-process server instead.
    public var connector: any ClientConnector = TCPConnector()
    /// The resource to ask for; `nil` lets the server pick one.
    public var resource: String?
    /// How the server's certificate is trusted.
    public var tls: ClientTLSPolicy = .requireValid
    /// Whether to refuse a server that does not offer TLS. On by default;
    /// turn off only for a loopback server without TLS (PLAIN is then never
    /// used, SCRAM still is).
    public var requireTLS = true
    /// The SQLite file of the local message archive and roster cache;
    /// `nil` keeps them in memory for the client's lifetime.
    public var storePath: String?
    /// When and how often to reconnect after the connection drops.
    public var reconnect = ReconnectPolicy()
    /// Whether a subscription request from someone already in the roster
    /// is approved without asking, as XMPPFramework's roster does.
    public var autoAcceptKnownContacts = true
    /// Whether to use stream management (XEP-0198) when the server offers
    /// it: acknowledged stanzas, and resuming the session after a drop so
    /// nothing sent meanwhile in either direction is lost.
    public var streamManagement = true
    /// Whether to ask for copies of what our other resources send and
    /// receive (XEP-0280 carbons), so every device shows the whole chat.
    public var carbons = true
    /// Whether to catch the local archive up with the server's message
    /// archive (XEP-0313) after each login.
    public var syncsHistory = true
    /// Whether to join, at each login, the rooms bookmarked with autojoin
    /// (XEP-0402); a client that connects only to do one thing and leave
    /// turns it off, so as not to appear in rooms.
    public var joinsBookmarkedRooms = true
    /// The longest wait for any one answer from the server.
    public var timeout: Duration = .seconds(15)
    /// How long the connection may be silent before the client pings the
    /// server; no answer within `timeout` after that counts as a drop.
    public var keepaliveInterval: Duration = .seconds(60)
    /// This installation's stable id for XEP-0388 (SASL2): the server
    /// issues FAST tokens to it, so keep it with the saved login. A new one
    /// by default.
    public var userAgentID = UUID()
    /// The software name shown to the server in SASL2 logins.
    public var software = "swiftlet"
    /// The XEP-0386 tag the server makes the resource from when
    /// ``resource`` is `nil`. With the same ``userAgentID`` it gives the
    /// same resource, so a new session replaces the installation's old
    /// one; a program that runs several sessions of one installation at
    /// once gives each its own tag.
    public var bindTag = "swiftlet"
    /// The device name shown to the server in SASL2 logins, such as the
    /// host's name; `nil` shows none.
    public var device: String?
    /// The clock that times reconnect delays, keepalive pings and
    /// timeouts: the system's by default; tests give one they move by hand,
    /// so nothing they check depends on how fast the machine is.
    public var clock: any Clock<Duration> = ContinuousClock()

    /// A configuration for `jid` with `secret` and the defaults above.
    public init(jid: JID, secret: ClientSecret) {
        self.jid = jid.bare
        self.secret = secret
    }

    /// A configuration for `jid` (`"alice@example.com"`) with `password`.
    /// - Throws: `XMPPClientError.invalidRequest` for a JID without a
    ///   localpart or one RFC 7622 rejects.
    public init(jid: String, password: String) throws(XMPPClientError) {
        guard let parsed = try? JID(jid), parsed.localpart != nil else {
            throw .invalidRequest("not an account JID: \(jid)")
        }
        self.init(jid: parsed, secret: .password(password))
    }

    /// The TLS settings for the XMPP stream, checking the certificate
    /// against the JID's domain (RFC 6125 takes the service's name, not the
    /// host connected to), which is also the SNI name.
    func tlsContext() throws(XMPPClientError) -> TLSContext {
        try Self.context(.client(verification: verification(hostname: jid.domainpart), serverName: jid.domainpart))
    }

    /// The TLS settings for an HTTPS transfer to `host` (an upload or a
    /// download, XEP-0363): the certificate is checked against the URL's
    /// host (RFC 9110 §4.3.4), which is also the SNI name.
    ///
    /// ``tls`` applies as it is only to the account's own server: the JID's
    /// domain, ``host``, or a host the server named itself (`namedByServer`,
    /// a slot's PUT URL). A pinned fingerprint or `insecureAcceptAny` is an
    /// exception the user made for that server's certificate and says
    /// nothing about anyone else's, so any other host (such as a contact's
    /// link) must present a certificate that chains to the system roots and
    /// names it.
    func httpsTLSConfiguration(host: String, namedByServer: Bool) -> TLSConfiguration {
        let trustsAsAccountServer = namedByServer || isAccountServer(host)
        return .client(
            verification: trustsAsAccountServer ? verification(hostname: host) : .requireValid(hostname: host),
            serverName: host)
    }

    /// ``httpsTLSConfiguration(host:namedByServer:)`` as a context.
    func httpsTLSContext(host: String, namedByServer: Bool) throws(XMPPClientError) -> TLSContext {
        try Self.context(httpsTLSConfiguration(host: host, namedByServer: namedByServer))
    }

    /// Whether `host` (a URL's, IPv6 without brackets) names the account's
    /// server: the JID's domain or ``host``.
    private func isAccountServer(_ host: String) -> Bool {
        func normalized(_ name: String) -> String {
            let lowered = name.lowercased()
            return lowered.hasPrefix("[") && lowered.hasSuffix("]") ? String(lowered.dropFirst().dropLast()) : lowered
        }
        let candidate = normalized(host)
        return [jid.domainpart, self.host].contains { $0.map(normalized) == candidate }
    }

    /// How ``tls`` checks a certificate that should name `hostname`.
    private func verification(hostname: String) -> TLSVerification {
        switch tls {
        case .requireValid: .requireValid(hostname: hostname)
        case .pinned(let fingerprint): .pinned(fingerprint)
        case .insecureAcceptAny: .insecureAcceptAny
        }
    }

    /// A context for `configuration`, its errors as `.tls`.
    private static func context(_ configuration: TLSConfiguration) throws(XMPPClientError) -> TLSContext {
        do {
            return try TLSContext(configuration: configuration)
        } catch {
            throw .tls("\(error)")
        }
    }
}
