/// TLS over a byte transport, the glue written once: ciphertext from the
/// peer goes in and plaintext comes out, plaintext goes in and ciphertext
/// goes out, and closing sends close_notify.
///
/// Whatever the `TLSSession` wants sent (a client's ClientHello, handshake
/// replies, records, the alert after a failure, close_notify) is handed to
/// `output` before each call returns, so nothing ever waits in the session
/// and callers never call ``TLSSession/takeOutput()`` themselves. Used by
/// the server's XMPP sessions and HTTPS connections and by the client's
/// stream and HTTPS transfers.
///
/// ```swift
/// let channel = SecureChannel(TLSSession(context: context)) { transport.write($0) }
/// let plaintext = try channel.receive(bytesFromTransport)
/// try channel.send(stanzaBytes)
/// channel.close()                         // then close the transport
/// ```
///
/// Not `Sendable`, like its session: it belongs to the loop that owns the
/// connection. After a failure (thrown as ``TLSError``) the caller closes
/// the transport; ``close()`` then adds nothing.
public struct SecureChannel {
    /// The TLS state: handshake progress, version, channel bindings.
    public let session: TLSSession
    private let output: ([UInt8]) -> Void

    /// Runs `session` over `output`, where its records go; a client's
    /// ClientHello is handed to `output` at once.
    public init(_ session: TLSSession, output: @escaping ([UInt8]) -> Void) {
        self.session = session
        self.output = output
        flush()
    }

    /// Whether the peer sent close_notify: it will send no more data.
    public var receivedCloseNotify: Bool { session.receivedCloseNotify }

    /// Feeds ciphertext from the peer; returns the plaintext it completed,
    /// possibly none. Handshake replies, and the alert after a failure, go
    /// to `output` first.
    /// - Throws: `TLSError`, as ``TLSSession/receive(ciphertext:)-(UnsafeRawBufferPointer)``.
    public func receive(_ ciphertext: UnsafeRawBufferPointer) throws(TLSError) -> [UInt8] {
        defer { flush() }
        return try session.receive(ciphertext: ciphertext)
    }

    /// Encrypts `plaintext` to `output` (or keeps it until the handshake
    /// completes).
    /// - Throws: `TLSError`, as ``TLSSession/send(plaintext:)-(UnsafeRawBufferPointer)``.
    public func send(_ plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        defer { flush() }
        try session.send(plaintext: plaintext)
    }

    /// Encrypts `plaintext` to `output`; see ``send(_:)-(UnsafeRawBufferPointer)``.
    public func send(_ plaintext: [UInt8]) throws(TLSError) {
        defer { flush() }
        try session.send(plaintext: plaintext)
    }

    /// Ends TLS: close_notify goes to `output` if the handshake completed
    /// (RFC 8446 §6.1). Close the transport afterwards.
    public func close() {
        session.close()
        flush()
    }

    private func flush() {
        let ciphertext = session.takeOutput()
        if !ciphertext.isEmpty { output(ciphertext) }
    }
}
