import COpenSSL

extension TLSSession {
    /// The RFC 9266 §2 exporter label for `tls-exporter`.
    private static let exporterLabel = Array("EXPORTER-Channel-Binding".utf8)
    /// The RFC 9266 §2 exporter output length, in bytes.
    private static let exporterLength = 32

    /// Every channel binding this connection can supply, for a SCRAM `-PLUS`
    /// server (RFC 5802 §6); empty before the handshake completes. Computed
    /// once, after the handshake.
    public var channelBindings: [ChannelBindingType: [UInt8]] {
        guard isHandshakeComplete else { return [:] }
        if let computedChannelBindings { return computedChannelBindings }
        var bindings: [ChannelBindingType: [UInt8]] = [:]
        for type in ChannelBindingType.allCases {
            bindings[type] = channelBindingData(for: type)
        }
        computedChannelBindings = bindings
        return bindings
    }

    /// Drops the bindings ``channelBindings`` computed, once authentication
    /// is over, so that an idle connection does not keep them; asked for
    /// again, they are computed again.
    public func forgetChannelBindings() {
        computedChannelBindings = nil
    }

    /// The channel-binding data of `type` for this connection, equal on both
    /// sides; `nil` before the handshake completes or when the type is not
    /// defined for it:
    ///
    /// - `tls-exporter` (RFC 9266): 32 bytes exported with the label
    ///   "EXPORTER-Channel-Binding" and an empty context. Only with TLS 1.3,
    ///   or TLS 1.2 with the extended master secret (RFC 7627), without which
    ///   RFC 9266 §3 forbids it.
    /// - `tls-server-end-point` (RFC 5929 §4.1): the hash of the server
    ///   certificate's DER with the hash of its signature algorithm, SHA-256
    ///   when that is MD5 or SHA-1.
    /// - `tls-unique`: never; RFC 9266 replaces it, and it is undefined in
    ///   TLS 1.3 (RFC 8446 §C.5).
    ///
    /// The corresponding C functions are `SSL_export_keying_material`,
    /// `X509_digest_sig` and `X509_digest`.
    public func channelBindingData(for type: ChannelBindingType) -> [UInt8]? {
        guard isHandshakeComplete else { return nil }
        switch type {
        case .tlsExporter: return exporterBinding()
        case .tlsServerEndPoint: return serverEndPointBinding()
        case .tlsUnique: return nil
        }
    }

    private func exporterBinding() -> [UInt8]? {
        guard protocolVersion == .tls1_3 || swiftlet_SSL_get_extms_support(ssl) == 1 else {
            return nil
        }
        OpenSSLErrorQueue.clear()
        var output = [UInt8](repeating: 0, count: Self.exporterLength)
        // An empty context, given (last argument 1): in TLS 1.2, "no context"
        // derives a different value.
        let status = Self.exporterLabel.withUnsafeBufferPointer { label in
            withUnsafePointer(to: UInt8(0)) { emptyContext in
                SSL_export_keying_material(
                    ssl, &output, output.count, label.baseAddress, label.count,
                    emptyContext, 0, 1)
            }
        }
        OpenSSLErrorQueue.clear()
        return status == 1 ? output : nil
    }

    private func serverEndPointBinding() -> [UInt8]? {
        let certificate =
            context.configuration.isServer
            ? SSL_get_certificate(ssl) : SSL_get0_peer_certificate(ssl)
        guard let certificate else { return nil }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        // The signature's hash, with a fixed fallback for algorithms that
        // name none (SHA-512 for Ed25519); it keeps MD5 and SHA-1, which
        // RFC 5929 §4.1 replaces with SHA-256.
        var used: OpaquePointer?
        guard let digest = X509_digest_sig(certificate, &used, nil) else { return nil }
        defer {
            ASN1_OCTET_STRING_free(digest)
            EVP_MD_free(used)
        }
        if let used, [NID_md5, NID_sha1].contains(EVP_MD_get_type(used)) {
            var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            guard X509_digest(certificate, EVP_sha256(), &output, &length) == 1 else { return nil }
            return Array(output.prefix(Int(length)))
        }
        let length = Int(ASN1_STRING_length(digest))
        return Array(UnsafeBufferPointer(start: ASN1_STRING_get0_data(digest), count: length))
    }
}
