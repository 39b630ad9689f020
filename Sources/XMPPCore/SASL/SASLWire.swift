/// A SASL mechanism this project implements, by its registered name as it
/// appears in `<mechanism/>` and in `<auth mechanism='…'/>` (RFC 6120 §6.4.1).
///
/// The `-PLUS` variants bind the exchange to the TLS channel (RFC 5802 §6).
/// The state machines support them given channel-binding data; the server
/// advertises them only once TLS can supply that data.
public enum SASLMechanism: String, Sendable, Hashable, CaseIterable {
    /// SCRAM over SHA-1 (RFC 5802); the best mechanism XMPPFramework speaks.
    case scramSHA1 = "SCRAM-SHA-1"
    /// SCRAM over SHA-1 with channel binding (RFC 5802).
    case scramSHA1Plus = "SCRAM-SHA-1-PLUS"
    /// SCRAM over SHA-256 (RFC 7677).
    case scramSHA256 = "SCRAM-SHA-256"
    /// SCRAM over SHA-256 with channel binding (RFC 7677).
    case scramSHA256Plus = "SCRAM-SHA-256-PLUS"
    /// The password in the clear, inside TLS (RFC 4616).
    case plain = "PLAIN"

    /// The hash a SCRAM mechanism runs on; `nil` for PLAIN.
    public var scramHashFunction: HashFunction? {
        switch self {
        case .scramSHA1, .scramSHA1Plus: .sha1
        case .scramSHA256, .scramSHA256Plus: .sha256
        case .plain: nil
        }
    }

    /// Whether this is a `-PLUS` mechanism, which requires channel binding.
    public var usesChannelBinding: Bool {
        self == .scramSHA1Plus || self == .scramSHA256Plus
    }
}

/// Why SASL authentication failed: the conditions of RFC 6120 §6.5, whose raw
/// values are the child element names of `<failure/>`.
public enum SASLFailure: String, Error, Sendable, Hashable, CaseIterable {
    /// The initiating entity sent `<abort/>` (§6.5.1).
    case aborted
    /// The account exists but is disabled (§6.5.2).
    case accountDisabled = "account-disabled"
    /// The credentials have expired (§6.5.3).
    case credentialsExpired = "credentials-expired"
    /// The mechanism may be used only over an encrypted stream (§6.5.4).
    case encryptionRequired = "encryption-required"
    /// The data was not valid base64 (§6.5.5, §6.4.2).
    case incorrectEncoding = "incorrect-encoding"
    /// The authorization identity is malformed or not allowed (§6.5.6).
    case invalidAuthzid = "invalid-authzid"
    /// The mechanism is unknown or not offered (§6.5.7).
    case invalidMechanism = "invalid-mechanism"
    /// The data violates the mechanism's syntax (§6.5.8).
    case malformedRequest = "malformed-request"
    /// The mechanism is weaker than policy allows for this account (§6.5.9).
    case mechanismTooWeak = "mechanism-too-weak"
    /// The credentials are wrong, or the user is unknown (§6.5.10); the two
    /// are deliberately indistinguishable.
    case notAuthorized = "not-authorized"
    /// A temporary server-side error; the client may retry (§6.5.11).
    case temporaryAuthFailure = "temporary-auth-failure"
}

/// Why a client-side SASL exchange stopped.
///
/// The client answers any of these with `<abort/>` (RFC 6120 §6.4.5) except
/// `serverError`, after which the server sends `<failure/>` itself.
public enum SASLClientError: Error, Sendable, Hashable {
    /// The username has no PRECIS UsernameCaseMapped form (RFC 8265 §3.3).
    case invalidUsername
    /// The password has no PRECIS OpaqueString form (RFC 8265 §4.2), e.g. it is empty.
    case invalidPassword
    /// The server's message breaks the mechanism's syntax.
    case malformedServerMessage
    /// The server sent a message when the exchange expected none, or a
    /// different one.
    case unexpectedServerMessage
    /// The server's nonce does not extend ours (RFC 5802 §5.1 `r`).
    case nonceMismatch
    /// The server asked for fewer PBKDF2 iterations than we accept; too few
    /// make a stolen exchange cheap to brute-force (RFC 7677 §4).
    case iterationCountTooLow(Int)
    /// The server asked for more iterations than we are willing to compute.
    case iterationCountTooHigh(Int)
    /// The saved keys were made for another salt or iteration count; log in
    /// with the password again.
    case savedKeysOutdated
    /// The server reported an error with `e=` (RFC 5802 §7 `server-error`).
    case serverError(String)
    /// The server's XEP-0474 `h=` does not hash the mechanisms and
    /// channel-binding types we saw advertised: someone changed the list.
    case downgradeDetected
    /// The server's `v=` signature is wrong: it does not know the password,
    /// so it is not the server we registered with (RFC 5802 §3).
    case serverSignatureMismatch
}

/// Who is logging in, as a server mechanism reports it before credentials are
/// checked.
public struct SASLIdentity: Sendable, Hashable {
    /// The authentication identity: the username, in its PRECIS
    /// UsernameCaseMapped form, ready to look up.
    public var username: String
    /// The requested authorization identity (RFC 6120 §6.3.8), a JID as the
    /// client sent it, or `nil` to act as `username` itself.
    public var authorizationIdentity: String?

    /// Creates an identity.
    public init(username: String, authorizationIdentity: String? = nil) {
        self.username = username
        self.authorizationIdentity = authorizationIdentity
    }
}

/// The character data of `<auth/>`, `<challenge/>`, `<response/>` and
/// `<success/>` (RFC 6120 §6.4.2).
public enum SASLPayload {
    /// Decodes element text: `""` means no data, `"="` means present but
    /// empty, anything else must be base64.
    ///
    /// - Throws: `SASLFailure.incorrectEncoding` for bad base64.
    public static func decode(_ text: String) throws(SASLFailure) -> [UInt8]? {
        switch text {
        case "": return nil
        case "=": return []
        default:
            do { return try Base64.decode(text) } catch { throw .incorrectEncoding }
        }
    }

    /// Encodes data as element text, the inverse of `decode(_:)`.
    public static func encode(_ data: [UInt8]?) -> String {
        guard let data else { return "" }
        return data.isEmpty ? "=" : Base64.encode(data)
    }
}
