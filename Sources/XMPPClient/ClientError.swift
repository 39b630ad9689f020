import XMPPCore

/// Why a client operation failed, in the groups an app reacts to
/// differently: retry later, fix the certificate setup, ask for the
/// password again, pick another username, or show the server's words.
public enum XMPPClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached (name lookup, refused, unreachable).
    case cannotConnect(String)
    /// The server did not answer in time.
    case timedOut
    /// The TLS handshake failed or the certificate was not trusted.
    case tls(String)
    /// The server offers nothing this client can use safely (no TLS where the
    /// policy needs it, no usable SASL mechanism).
    case unsupportedServer(String)
    /// Wrong username or password, or saved keys the server no longer takes.
    case notAuthorized
    /// Registration: the username is taken.
    case registrationConflict
    /// Registration: the server does not allow it (closed, throttled, or a
    /// username it refuses).
    case registrationNotAllowed(String)
    /// The server ended the stream with this error.
    case streamError(StreamError.Condition, text: String?)
    /// The server answered a request with this stanza error.
    case stanzaError(StanzaError.Condition, text: String?)
    /// The request is not valid here (adding oneself, an existing contact, a
    /// bad JID); nothing was sent.
    case invalidRequest(String)
    /// The client is not connected (or was disconnected while waiting).
    case notConnected
    /// The local store (archive, roster cache) failed.
    case storage(String)

    public var description: String {
        switch self {
        case .cannotConnect(let why): "cannot reach the server: \(why)"
        case .timedOut: "the server did not answer in time"
        case .tls(let why): "TLS failed: \(why)"
        case .unsupportedServer(let why): "the server cannot be used: \(why)"
        case .notAuthorized: "not authorized: wrong username or password"
        case .registrationConflict: "that username is already taken"
        case .registrationNotAllowed(let why): "registration not allowed: \(why)"
        case .streamError(let condition, let text):
            "the server ended the stream: \(condition.rawValue)" + (text.map { " (\($0))" } ?? "")
        case .stanzaError(let condition, let text):
            "the server refused: \(condition.rawValue)" + (text.map { " (\($0))" } ?? "")
        case .invalidRequest(let why): why
        case .notConnected: "not connected"
        case .storage(let why): "the local store failed: \(why)"
        }
    }
}
