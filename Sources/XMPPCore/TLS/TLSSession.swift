import COpenSSL

/// One TLS connection, server or client side, that only transforms bytes:
/// the event loop feeds it ciphertext from the socket and writes out what it
/// produces. No sockets, no threads.
///
/// OpenSSL reads the ciphertext we hand it and writes ciphertext for the
/// peer (handshake messages, records, alerts, close_notify) through one BIO
/// of our own (`CiphertextBIO`), which is the only way out: after any call,
/// write ``takeOutput()`` to the socket.
///
/// ```swift
/// let tls = TLSSession(context: context)            // client: ClientHello now pending
/// socket.write(tls.takeOutput())
/// let plaintext = try tls.receive(ciphertext: bytesFromSocket)
/// socket.write(tls.takeOutput())                    // handshake replies, if any
/// try tls.send(plaintext: stanzaBytes)
/// socket.write(tls.takeOutput())
/// ```
///
/// Not `Sendable`: one session belongs to the loop that owns its connection.
/// A failure (garbage input, a rejected certificate, a bad record) ends this
/// session only; it throws ``TLSError`` and never traps.
public final class TLSSession {
    private enum State {
        case handshaking
        case established
        /// We sent close_notify, or closed before the handshake finished.
        case closed
        case failed(TLSError)
    }

    /// The context this session was made from.
    public let context: TLSContext
    /// `channelBindings` once computed: fixed once the handshake is done,
    /// and asked for by every features element and SASL exchange.
    var computedChannelBindings: [ChannelBindingType: [UInt8]]?
    /// The `SSL *`, owned; it owns the `BIO *` of `network`.
    let ssl: OpaquePointer
    /// Ciphertext both ways: from the peer, read by OpenSSL, and for the
    /// peer, written by OpenSSL.
    private let network = CiphertextBIO()
    private var state = State.handshaking
    /// Plaintext sent before the handshake finished, written once it does.
    private var earlyPlaintext: [UInt8] = []
    /// Whether the peer sent close_notify: it will send no more data. Reply
    /// with ``close()`` and close the socket once its output is written.
    public private(set) var receivedCloseNotify = false

    /// Creates a session; a client session starts the handshake at once, so
    /// its ClientHello is waiting in ``takeOutput()``.
    ///
    /// Everything that can be wrong with the configuration was checked by
    /// ``TLSContext``; OpenSSL fails here only when out of memory, where
    /// Swift itself would stop the process.
    ///
    /// The corresponding C functions are `SSL_new`, `SSL_set_bio` and
    /// `SSL_set_tlsext_host_name`.
    public init(context: TLSContext) {
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.pointer) else { fatalError("OpenSSL is out of memory") }
        // The same BIO both ways: `SSL_set_bio` then takes one reference.
        SSL_set_bio(ssl, network.bio, network.bio)
        if context.configuration.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let name = context.configuration.effectiveServerName {
                precondition(
                    swiftlet_SSL_set_tlsext_host_name(ssl, name) == 1, "SNI name not checked")
            }
        }
        self.context = context
        self.ssl = ssl
        if !context.configuration.isServer {
            // A failure is kept in `state` and thrown by the next call.
            try? continueHandshake()
        }
    }

    deinit {
        SSL_free(ssl)
    }

    /// Whether the handshake has finished, so ``protocolVersion``, the
    /// cipher and channel bindings are known. Stays true after ``close()``.
    public private(set) var isHandshakeComplete = false

    /// The negotiated protocol version, once the handshake is complete.
    ///
    /// The corresponding C function is `SSL_version`.
    public var protocolVersion: TLSVersion? {
        isHandshakeComplete ? TLSVersion(rawValue: SSL_version(ssl)) : nil
    }

    /// The negotiated cipher suite in OpenSSL's naming, e.g.
    /// `TLS_AES_256_GCM_SHA384` or `ECDHE-ECDSA-AES128-GCM-SHA256`; for logs.
    ///
    /// The corresponding C function is `SSL_CIPHER_get_name`.
    public var cipherSuite: String? {
        guard isHandshakeComplete, let cipher = SSL_get_current_cipher(ssl) else { return nil }
        return String(cString: SSL_CIPHER_get_name(cipher))
    }

    /// The ALPN protocol both sides agreed on (RFC 7301), if any.
    ///
    /// The corresponding C function is `SSL_get0_alpn_selected`.
    public var applicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The number of ciphertext bytes waiting to be written to the peer.
    public var pendingOutputCount: Int { network.pendingOutputCount }

    /// Removes and returns the ciphertext waiting to be written to the peer,
    /// in order: handshake messages, records, alerts, close_notify.
    public func takeOutput() -> [UInt8] {
        network.takeOutput()
    }

    /// Feeds ciphertext from the peer and returns the plaintext it completed,
    /// possibly none. Handshake replies, and any alert after a failure, wait
    /// in ``takeOutput()``. Once the peer sent close_notify
    /// (``receivedCloseNotify``), further input is ignored.
    ///
    /// - Throws: `TLSError`: `.certificateRejected` or `.handshakeFailed`
    ///   during the handshake, `.protocolViolation` after it. The session
    ///   then stays failed and throws the same error on every call.
    ///
    /// The corresponding C functions are `SSL_do_handshake` and `SSL_read_ex`.
    public func receive(ciphertext: UnsafeRawBufferPointer) throws(TLSError) -> [UInt8] {
        if case .failed(let error) = state { throw error }
        guard !receivedCloseNotify else { return [] }
        return try network.withInput(ciphertext) { () throws(TLSError) in
            try continueHandshake()
            return isHandshakeComplete ? try readPlaintext() : []
        }
    }

    /// Feeds ciphertext from the peer; see ``receive(ciphertext:)-(UnsafeRawBufferPointer)``.
    public func receive(ciphertext: [UInt8]) throws(TLSError) -> [UInt8] {
        // `withUnsafeBytes` rethrows untyped errors; `Result` keeps the type.
        try ciphertext.withUnsafeBytes { bytes in
            Result { () throws(TLSError) in try receive(ciphertext: bytes) }
        }.get()
    }

    /// Encrypts `plaintext` for ``takeOutput()``. Before the handshake
    /// completes, the plaintext is kept and encrypted as soon as it does.
    ///
    /// - Throws: `TLSError`: the stored error if the session failed,
    ///   `.alreadyClosed` after ``close()``.
    ///
    /// The corresponding C function is `SSL_write_ex`.
    public func send(plaintext: UnsafeRawBufferPointer) throws(TLSError) {
        switch state {
        case .failed(let error): throw error
        case .closed: throw TLSError(.alreadyClosed, "TLS session already closed")
        case .handshaking: earlyPlaintext.append(contentsOf: plaintext)
        case .established: try write(plaintext)
        }
    }

    /// Encrypts `plaintext`; see ``send(plaintext:)-(UnsafeRawBufferPointer)``.
    public func send(plaintext: [UInt8]) throws(TLSError) {
        try plaintext.withUnsafeBytes { bytes in
            Result { () throws(TLSError) in try send(plaintext: bytes) }
        }.get()
    }

    /// Ends the session, queueing a close_notify alert for ``takeOutput()``
    /// if the handshake had completed (RFC 8446 §6.1); write the output, then
    /// close the socket. Calling it again, or after a failure, adds nothing:
    /// a failed session must not send close_notify.
    ///
    /// The corresponding C function is `SSL_shutdown`.
    public func close() {
        switch state {
        case .established:
            OpenSSLErrorQueue.clear()
            // 0 (sent, the peer's not seen yet) and 1 (both seen) are both
            // fine: we do not wait for the peer's close_notify.
            _ = SSL_shutdown(ssl)
            OpenSSLErrorQueue.clear()
            state = .closed
        case .handshaking:
            state = .closed
        case .closed, .failed:
            break
        }
        earlyPlaintext = []
    }

    /// Runs the handshake as far as the input allows.
    private func continueHandshake() throws(TLSError) {
        guard case .handshaking = state else { return }
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(ssl)
        guard result == 1 else {
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
            default: throw fail(.handshakeFailed, "handshake failed")
            }
        }
        state = .established
        isHandshakeComplete = true
        if !earlyPlaintext.isEmpty {
            let plaintext = earlyPlaintext
            earlyPlaintext = []
            try plaintext.withUnsafeBytes { bytes in
                Result { () throws(TLSError) in try write(bytes) }
            }.get()
        }
    }

    /// Encrypts `bytes` into the output BIO.
    private func write(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        guard !bytes.isEmpty else { return }
        OpenSSLErrorQueue.clear()
        var written = 0
        // Without partial-write mode, success means every byte was taken;
        // our BIO never asks to retry a write.
        guard SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &written) == 1 else {
            throw fail(.protocolViolation, "write failed")
        }
    }

    /// Decrypts every complete record waiting in the input BIO.
    private func readPlaintext() throws(TLSError) -> [UInt8] {
        var plaintext: [UInt8] = []
        while !receivedCloseNotify {
            // Plaintext is shorter than the ciphertext it came from, so what
            // waits in the BIO, plus what OpenSSL already decrypted, is a
            // good size; a record begun in an earlier call can yield a
            // little more, hence the loop.
            let estimate = network.pendingInputCount + Int(SSL_pending(ssl))
            guard estimate > 0 else { break }
            var ranDry = false
            var failure: TLSError?
            let chunk = [UInt8](unsafeUninitializedCapacity: estimate) { buffer, filled in
                while filled < estimate, !ranDry {
                    OpenSSLErrorQueue.clear()
                    var count = 0
                    let start = buffer.baseAddress! + filled
                    if SSL_read_ex(ssl, start, estimate - filled, &count) == 1 {
                        filled += count
                        continue
                    }
                    ranDry = true
                    switch SSL_get_error(ssl, 0) {
                    case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: break
                    case SSL_ERROR_ZERO_RETURN: receivedCloseNotify = true
                    default: failure = fail(.protocolViolation, "cannot read record")
                    }
                }
            }
            if let failure { throw failure }
            if plaintext.isEmpty { plaintext = chunk } else { plaintext += chunk }
            if ranDry { break }
        }
        return plaintext
    }

    /// Records a failure with everything OpenSSL queued, as a certificate
    /// rejection if verification is what failed.
    ///
    /// The corresponding C functions are `SSL_get_verify_result` and
    /// `X509_verify_cert_error_string`.
    private func fail(_ kind: TLSError.Kind, _ what: String) -> TLSError {
        var error = TLSError.drainingQueue(kind, what)
        let verifies: Bool
        switch context.configuration.role {
        case .client(.insecureAcceptAny), .server: verifies = false
        case .client: verifies = true
        }
        let verifyResult = SSL_get_verify_result(ssl)
        if verifies, verifyResult != X509_V_OK {
            let reason = String(cString: X509_verify_cert_error_string(verifyResult))
            error = TLSError(
                .certificateRejected, "server certificate rejected (\(reason)); \(error.message)")
        }
        state = .failed(error)
        earlyPlaintext = []
        return error
    }
}

@available(*, unavailable, message: "a TLSSession belongs to the loop that owns its connection")
extension TLSSession: Sendable {}
