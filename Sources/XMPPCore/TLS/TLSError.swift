import COpenSSL

/// Why a TLS context could not be set up, a certificate could not be made,
/// or a TLS session stopped; with OpenSSL's own explanation.
///
/// A session error ends that connection only: the session stays failed and
/// throws the same error again, and any alert OpenSSL queued for the peer is
/// left in its output to be sent before the socket is closed.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, coarsely, for callers that react differently.
    public enum Kind: Sendable, Hashable {
        /// The configuration cannot be applied: a missing or unreadable
        /// certificate or key, a key that does not match the certificate, an
        /// invalid name, or a file that cannot be written.
        case invalidConfiguration
        /// The peer's certificate failed verification: untrusted, expired,
        /// issued for another name, or not the pinned one.
        case certificateRejected
        /// The handshake failed for another reason: no common protocol
        /// version or cipher, an alert from the peer, or bytes that are not TLS.
        case handshakeFailed
        /// After the handshake, the peer sent records that do not decrypt or
        /// parse, or a fatal alert.
        case protocolViolation
        /// Plaintext was sent after ``TLSSession/close()``.
        case alreadyClosed
    }

    /// What went wrong.
    public let kind: Kind
    /// OpenSSL's error strings, oldest first, or our own text when OpenSSL
    /// has none; for logs.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The kind and the message, for logs.
    public var description: String { "TLS \(kind): \(message)" }

    /// An error whose message is `context` followed by everything on this
    /// thread's OpenSSL error queue, which it empties.
    static func drainingQueue(_ kind: Kind, _ context: String) -> TLSError {
        let queued = OpenSSLErrorQueue.drain()
        return TLSError(kind, queued.isEmpty ? context : "\(context): \(queued)")
    }
}

/// OpenSSL's error queue, which is per thread: one event loop thread serves
/// many connections, so every operation starts by clearing it and every
/// failure empties it, and one connection's errors never show up in
/// another's.
enum OpenSSLErrorQueue {
    /// Discards every queued error.
    ///
    /// The corresponding C function is `ERR_clear_error`.
    static func clear() {
        ERR_clear_error()
    }

    /// Removes every queued error and returns their strings, oldest first,
    /// joined by "; "; empty when the queue was empty.
    ///
    /// The corresponding C functions are `ERR_get_error` and `ERR_error_string_n`.
    static func drain() -> String {
        var messages: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = ERR_get_error(), code != 0 {
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(
                String(
                    decoding: buffer.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
            )
        }
        return messages.joined(separator: "; ")
    }
}
