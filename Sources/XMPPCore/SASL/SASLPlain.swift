/// The PLAIN mechanism (RFC 4616): the client sends
/// `[authzid] NUL authcid NUL passwd` in one message.
///
/// The password crosses the wire as is, so the server offers PLAIN only over
/// TLS (RFC 6120 §6.3.4; otherwise `encryption-required`). It is checked
/// against the stored SCRAM credentials with `SCRAMCredentials.matches(password:)`.
public enum SASLPlain {
    /// The longest authorization identity accepted, in bytes: a full JID
    /// (RFC 7622 §3.1: 3 × 1023 octets).
    public static let maximumAuthorizationIdentityByteCount = 3071
    /// The longest username accepted, in bytes: a localpart (RFC 7622 §3.3).
    public static let maximumUsernameByteCount = 1023
    /// The longest password accepted, in bytes.
    public static let maximumPasswordByteCount = 1023

    /// A parsed PLAIN message.
    public struct Request: Sendable, Hashable {
        /// Who is logging in; the username is already prepared with PRECIS
        /// UsernameCaseMapped.
        public var identity: SASLIdentity
        /// The password as sent; `SCRAMCredentials.matches(password:)`
        /// prepares it.
        public var password: String
    }

    /// Parses a PLAIN message on the server (RFC 4616 §2).
    ///
    /// - Throws: `SASLFailure.malformedRequest` unless there are exactly two
    ///   NULs, the username and password are non-empty, every part is UTF-8
    ///   within its length limit, and the username has a PRECIS
    ///   UsernameCaseMapped form.
    public static func parse(_ message: [UInt8]) throws(SASLFailure) -> Request {
        let parts = message.split(separator: 0, omittingEmptySubsequences: false)
        guard parts.count == 3,
            parts[0].count <= maximumAuthorizationIdentityByteCount,
            (1...maximumUsernameByteCount).contains(parts[1].count),
            (1...maximumPasswordByteCount).contains(parts[2].count),
            let authorizationIdentity = String(validating: parts[0], as: UTF8.self),
            let authenticationIdentity = String(validating: parts[1], as: UTF8.self),
            let password = String(validating: parts[2], as: UTF8.self)
        else { throw .malformedRequest }

        let username: String
        do { username = try PRECIS.usernameCaseMapped(authenticationIdentity) } catch {
            throw .malformedRequest
        }
        return Request(
            identity: SASLIdentity(
                username: username,
                authorizationIdentity: authorizationIdentity.isEmpty ? nil : authorizationIdentity),
            password: password)
    }

    /// Builds a PLAIN message on the client, preparing the username with
    /// PRECIS UsernameCaseMapped and the password with OpaqueString
    /// (RFC 8265 §3.3, §4.2).
    ///
    /// - Parameters:
    ///   - username: The account's username (the JID's localpart).
    ///   - password: The password.
    ///   - authorizationIdentity: A JID to act as; usually `nil`.
    /// - Throws: `SASLClientError.invalidUsername` or `.invalidPassword`.
    public static func encode(
        username: String, password: String, authorizationIdentity: String? = nil
    ) throws(SASLClientError) -> [UInt8] {
        precondition(authorizationIdentity?.utf8.contains(0) != true, "NUL in authzid")
        let preparedUsername: String
        let preparedPassword: String
        do { preparedUsername = try PRECIS.usernameCaseMapped(username) } catch {
            throw .invalidUsername
        }
        do { preparedPassword = try PRECIS.opaqueString(password) } catch {
            throw .invalidPassword
        }
        return Array((authorizationIdentity ?? "").utf8) + [0] + Array(preparedUsername.utf8)
            + [0] + Array(preparedPassword.utf8)
    }
}

extension SASLPlain.Request: CustomStringConvertible, CustomReflectable {
    /// Shows who is logging in, never the password.
    public var description: String {
        "SASLPlain.Request(username: \(identity.username), password: <redacted>)"
    }
    public var customMirror: Mirror { Mirror(self, children: ["identity": identity]) }
}
