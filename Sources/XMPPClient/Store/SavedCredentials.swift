import Foundation
import XMPPCore

/// What `swiftlet login` saves so that later commands log in without the
/// password: the account, the SCRAM keys derived from the password (RFC
/// 5802 §5.1), how to reach the server, and the XEP-0484 FAST token with
/// the user-agent id it was issued to.
///
/// The password itself is never kept. The keys and the token still let
/// whoever holds them log in to this account on this server (the keys until
/// the password changes, the token until it expires), so the file is
/// private to its owner (see `write(to:)` and `read(from:)`) and
/// `description` leaves them out.
///
/// Reading and writing the file are in `SavedCredentials+File.swift`.
public struct SavedCredentials: Sendable, Hashable {
    /// The account's bare JID.
    public let jid: JID
    /// The SCRAM mechanism to log in with; its hash is the keys' hash.
    public let mechanism: SASLMechanism
    /// The keys, salt and iteration count from the last login with the password.
    public let keys: SCRAMClientKeys
    /// The host to connect to instead of resolving the JID's domain; `nil`
    /// for the domain.
    public let host: String?
    /// The TCP port to connect to; `nil` for the default.
    public let port: Int?
    /// How the server's certificate is checked.
    public let tls: ClientTLSPolicy
    /// The token for one-round-trip logins, if the server issued one.
    public let fastToken: FASTToken?
    /// The XEP-0388 user-agent id the token was issued to; `nil` in a file
    /// saved before SASL2.
    public let userAgentID: UUID?

    /// Creates saved credentials.
    ///
    /// - Parameters:
    ///   - jid: The account; its resource, if any, is dropped.
    ///   - mechanism: A SCRAM mechanism over `keys.hashFunction`; a `-PLUS`
    ///     one is allowed, since channel binding does not change the keys.
    ///   - keys: The keys `SCRAMClient` produced.
    ///   - host: The host to connect to, if not the domain.
    ///   - port: The port, if not the default; 1 to 65535.
    ///   - tls: The certificate policy; `.requireValid` by default.
    ///   - fastToken: A FAST token, if there is one.
    ///   - userAgentID: The user-agent id the client logged in with.
    /// - Precondition: `mechanism` runs on `keys.hashFunction`, and `port`
    ///   is a TCP port.
    public init(
        jid: JID, mechanism: SASLMechanism, keys: SCRAMClientKeys, host: String? = nil,
        port: Int? = nil, tls: ClientTLSPolicy = .requireValid, fastToken: FASTToken? = nil,
        userAgentID: UUID? = nil
    ) {
        precondition(
            mechanism.scramHashFunction == keys.hashFunction,
            "\(mechanism.rawValue) cannot use \(keys.hashFunction.rawValue) keys")
        precondition(port.map(Self.portRange.contains) ?? true, "not a TCP port")
        self.jid = jid.bare
        self.mechanism = mechanism
        self.keys = keys
        self.host = host
        self.port = port
        self.tls = tls
        self.fastToken = fastToken
        self.userAgentID = userAgentID
    }

    /// The ports `port` may hold.
    static let portRange = 1...65535
}

// The keys are secrets: keep them out of logs, `print`, string
// interpolation and `dump`, as `SCRAMClientKeys` does.
extension SavedCredentials: CustomStringConvertible, CustomReflectable {
    /// The account, mechanism, server and TLS policy; never the keys or
    /// the token.
    public var description: String {
        let server = (host ?? jid.domainpart) + (port.map { ":\($0)" } ?? "")
        let token = fastToken.map { ", \($0)" } ?? ""
        return "SavedCredentials(\(jid), \(mechanism.rawValue), \(server), tls: \(tls), "
            + "keys: <redacted>\(token))"
    }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "jid": jid, "mechanism": mechanism, "host": host as Any, "port": port as Any,
                "tls": tls,
            ])
    }
}
