import COpenSSL

/// A configured OpenSSL context (`SSL_CTX`), shared by every ``TLSSession``
/// made from it: load the certificate once, then open sessions from any loop.
///
/// `@unchecked Sendable`: every stored property is immutable after `init`,
/// and the `SSL_CTX` is fully configured inside `init` and never changed
/// afterwards. OpenSSL documents that an `SSL_CTX` may then be used from
/// several threads at once to create `SSL` objects (openssl-threads(7));
/// its reference count and session cache take their own locks.
public final class TLSContext: @unchecked Sendable {
    /// The OpenSSL this process runs (`OpenSSL 3.0.22 ...`), for `--version`.
    public static var libraryDescription: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }

    /// The `SSL_CTX *`, owned.
    let pointer: OpaquePointer
    /// What this context was built from.
    public let configuration: TLSConfiguration
    /// Server role: the SHA-256 fingerprint of the leaf certificate, to log at
    /// start so users can compare or pin it. `nil` for a client.
    public let certificateFingerprint: CertificateFingerprint?
    /// State the C callbacks read; kept alive as long as the `SSL_CTX`.
    private let callbackState: CallbackState

    /// Builds a context, loading and checking the certificate and key for a
    /// server.
    ///
    /// - Throws: `TLSError` (`.invalidConfiguration`) for an unreadable,
    ///   malformed or mismatched certificate or key, an unusable trust root,
    ///   hostname or SNI name, an empty or overlong ALPN ID, or a minimum
    ///   version above the maximum.
    ///
    /// The corresponding C function is `SSL_CTX_new`.
    public init(configuration: TLSConfiguration) throws(TLSError) {
        guard configuration.minimumVersion <= configuration.maximumVersion else {
            throw TLSError(.invalidConfiguration, "minimum TLS version above maximum")
        }
        let state = try CallbackState(configuration: configuration)
        OpenSSLErrorQueue.clear()
        let method = configuration.isServer ? TLS_server_method() : TLS_client_method()
        guard let context = SSL_CTX_new(method) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "SSL_CTX_new failed")
        }
        do throws(TLSError) {
            try Self.applyDefaults(context, configuration)
            switch configuration.role {
            case .server(let source):
                certificateFingerprint = try Self.useCertificate(context, source)
                try Self.enableResumption(context, state)
                if !state.applicationProtocols.isEmpty {
                    Self.selectApplicationProtocol(context, state)
                }
            case .client(let verification):
                certificateFingerprint = nil
                if let name = configuration.effectiveServerName,
                    !(1...255).contains(name.utf8.count)
                {
                    throw TLSError(.invalidConfiguration, "SNI names are 1 to 255 bytes long")
                }
                try Self.configureVerification(context, verification, state)
                try Self.offerApplicationProtocols(context, configuration.applicationProtocols)
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        OpenSSLErrorQueue.clear()
        self.pointer = context
        self.configuration = configuration
        self.callbackState = state
    }

    deinit {
        SSL_CTX_free(pointer)
    }

    /// Versions, options, modes and TLS 1.2 cipher suites.
    private static func applyDefaults(
        _ context: OpaquePointer, _ configuration: TLSConfiguration
    ) throws(TLSError) {
        var options = swiftlet_SSL_OP_NO_COMPRESSION | swiftlet_SSL_OP_NO_RENEGOTIATION
        if configuration.isServer { options |= swiftlet_SSL_OP_CIPHER_SERVER_PREFERENCE }
        SSL_CTX_set_options(context, options)
        // Idle XMPP connections are the norm: free the read and write
        // buffers (about 34 KiB per connection) while nothing is in flight.
        var mode = Int(SSL_MODE_RELEASE_BUFFERS)
        // A server sends the chain it was given (useCertificate). Without
        // this, OpenSSL tries to build one from its empty trust store at
        // every handshake that has no intermediates, and sends the same.
        if configuration.isServer { mode |= Int(SSL_MODE_NO_AUTO_CHAIN) }
        _ = swiftlet_SSL_CTX_set_mode(context, mode)
        // TLS 1.2 suites: ephemeral ECDH with AES-GCM or ChaCha20-Poly1305
        // only (forward secrecy, AEAD). SecureTransport offers the ECDHE
        // AES-GCM suites. TLS 1.3 suites are all AEAD and keep their defaults.
        let (minimum, maximum) = (configuration.minimumVersion, configuration.maximumVersion)
        guard swiftlet_SSL_CTX_set_min_proto_version(context, minimum.rawValue) == 1,
            swiftlet_SSL_CTX_set_max_proto_version(context, maximum.rawValue) == 1,
            SSL_CTX_set_cipher_list(context, "ECDHE+AESGCM:ECDHE+CHACHA20") == 1
        else {
            throw TLSError.drainingQueue(
                .invalidConfiguration, "cannot set protocol versions or ciphers")
        }
    }

    /// Loads the chain and key into `context` and returns the leaf's fingerprint.
    ///
    /// The corresponding C functions are `SSL_CTX_use_certificate`,
    /// `SSL_CTX_add0_chain_cert`, `SSL_CTX_use_PrivateKey` and
    /// `SSL_CTX_check_private_key`.
    private static func useCertificate(
        _ context: OpaquePointer, _ source: TLSCertificateSource
    ) throws(TLSError) -> CertificateFingerprint {
        let (chainBIO, keyBIO) = try openBIOs(source)
        defer {
            BIO_free(chainBIO)
            BIO_free(keyBIO)
        }
        guard let leaf = PEM_read_bio_X509(chainBIO, nil, nil, nil) else {
            throw TLSError.drainingQueue(.invalidConfiguration, "no certificate in the chain")
        }
        defer { X509_free(leaf) }
        guard SSL_CTX_use_certificate(context, leaf) == 1 else {
            throw TLSError.drainingQueue(.invalidConfiguration, "certificate refused")
        }
        while let intermediate = PEM_read_bio_X509(chainBIO, nil, nil, nil) {
            guard swiftlet_SSL_CTX_add0_chain_cert(context, intermediate) == 1 else {
                X509_free(intermediate)
                throw TLSError.drainingQueue(
                    .invalidConfiguration, "intermediate certificate refused")
            }
        }
        // The loop above ends on "no start line" at the end of the text; any
        // other error means a damaged certificate.
        let endOfChain = ERR_peek_last_error()
        guard endOfChain == 0 || ERR_GET_REASON(endOfChain) == PEM_R_NO_START_LINE else {
            throw TLSError.drainingQueue(.invalidConfiguration, "damaged certificate in the chain")
        }
        OpenSSLErrorQueue.clear()
        // An encrypted key would make OpenSSL prompt on the terminal; the
        // callback refuses to supply a passphrase instead.
        guard let key = PEM_read_bio_PrivateKey(keyBIO, nil, { _, _, _, _ in 0 }, nil) else {
            throw TLSError.drainingQueue(
                .invalidConfiguration, "no unencrypted private key found")
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1
        else {
            throw TLSError.drainingQueue(
                .invalidConfiguration, "private key does not match the certificate")
        }
        return CertificateFingerprint(certificate: leaf)
    }

    /// Server: resumption by session ticket (RFC 8446 §2.2, RFC 5077) with
    /// the process's rotating keys (``SessionTicketKeys``), in a session ID
    /// context per ALPN list, so that a ticket from the HTTPS listener does
    /// not resume an XMPP connection or the reverse.
    ///
    /// The corresponding C function is `SSL_CTX_set_session_id_context`.
    private static func enableResumption(
        _ context: OpaquePointer, _ state: CallbackState
    ) throws(TLSError) {
        // RFC 7301's wire form, hashed to fit the 32 bytes OpenSSL allows.
        let protocols = state.applicationProtocols.flatMap { [UInt8($0.count)] + $0 }
        let sessionContext = HashFunction.sha256.hash(protocols)
        guard
            SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count)) == 1,
            SessionTicketKeys.install(on: context)
        else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot set up session tickets")
        }
    }

    /// BIOs over the chain and the key, from memory or from files.
    ///
    /// The corresponding C function is `BIO_new_file`.
    private static func openBIOs(
        _ source: TLSCertificateSource
    ) throws(TLSError) -> (chain: OpaquePointer, key: OpaquePointer) {
        switch source {
        case .pem(let chain, let key):
            let chainBIO = try MemoryBIO.reading(chain)
            do { return (chainBIO, try MemoryBIO.reading(key)) } catch {
                BIO_free(chainBIO)
                throw error
            }
        case .pemFiles(let chainPath, let keyPath):
            guard let chainBIO = BIO_new_file(chainPath, "r") else {
                throw TLSError.drainingQueue(.invalidConfiguration, "cannot read \(chainPath)")
            }
            guard let keyBIO = BIO_new_file(keyPath, "r") else {
                BIO_free(chainBIO)
                throw TLSError.drainingQueue(.invalidConfiguration, "cannot read \(keyPath)")
            }
            return (chainBIO, keyBIO)
        }
    }

    /// Sets how the client checks the server's certificate.
    ///
    /// The corresponding C functions are `SSL_CTX_set_verify`,
    /// `SSL_CTX_set_default_verify_paths`, `X509_VERIFY_PARAM_set1_host`
    /// and `SSL_CTX_set_cert_verify_callback`.
    private static func configureVerification(
        _ context: OpaquePointer, _ verification: TLSVerification, _ state: CallbackState
    ) throws(TLSError) {
        switch verification {
        case .requireValid(let hostname, let extraRoots):
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw TLSError.drainingQueue(
                    .invalidConfiguration, "cannot load the system trust store")
            }
            for pem in extraRoots {
                let root = try X509Certificates.readFirst(pem: pem)
                defer { X509_free(root) }
                guard X509_STORE_add_cert(SSL_CTX_get_cert_store(context), root) == 1 else {
                    throw TLSError.drainingQueue(.invalidConfiguration, "trust root refused")
                }
            }
            let parameters = SSL_CTX_get0_param(context)
            X509_VERIFY_PARAM_set_hostflags(
                parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            let named: Int32
            if let address = IPAddressLiteral.parse(hostname) {
                named = X509_VERIFY_PARAM_set1_ip_asc(parameters, address)
            } else {
                named = X509_VERIFY_PARAM_set1_host(parameters, hostname, 0)
            }
            guard named == 1 else {
                throw TLSError.drainingQueue(.invalidConfiguration, "invalid hostname \(hostname)")
            }
        case .pinned:
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            // Replaces chain verification: only the leaf's digest counts.
            let argument = Unmanaged.passUnretained(state).toOpaque()
            SSL_CTX_set_cert_verify_callback(
                context,
                { store, argument in
                    guard let store, let argument, let leaf = X509_STORE_CTX_get0_cert(store) else {
                        return 0
                    }
                    let state = Unmanaged<CallbackState>.fromOpaque(argument).takeUnretainedValue()
                    guard CertificateFingerprint(certificate: leaf) == state.pinnedFingerprint
                    else {
                        X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)
                        return 0
                    }
                    return 1
                }, argument)
        case .insecureAcceptAny:
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
    }

    /// Client: lists the ALPN IDs to offer.
    ///
    /// The corresponding C function is `SSL_CTX_set_alpn_protos`.
    private static func offerApplicationProtocols(
        _ context: OpaquePointer, _ protocols: [String]
    ) throws(TLSError) {
        guard !protocols.isEmpty else { return }
        // RFC 7301 §3.1: each ID prefixed by its one-byte length.
        let wire = protocols.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        // Unusually, 0 means success here.
        guard SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0 else {
            throw TLSError.drainingQueue(.invalidConfiguration, "cannot set ALPN protocols")
        }
    }

    /// Server: picks the first of our ALPN IDs that the client offered.
    ///
    /// The corresponding C function is `SSL_CTX_set_alpn_select_cb`.
    private static func selectApplicationProtocol(_ context: OpaquePointer, _ state: CallbackState)
    {
        let argument = Unmanaged.passUnretained(state).toOpaque()
        SSL_CTX_set_alpn_select_cb(
            context,
            { _, selected, selectedLength, offered, offeredLength, argument in
                guard let selected, let selectedLength, let offered, let argument else {
                    return SSL_TLSEXT_ERR_NOACK
                }
                let state = Unmanaged<CallbackState>.fromOpaque(argument).takeUnretainedValue()
                let offers = UnsafeBufferPointer(start: offered, count: Int(offeredLength))
                guard let range = state.firstSupportedProtocol(in: offers) else {
                    return SSL_TLSEXT_ERR_NOACK
                }
                // Points into the client's list, valid during the callback;
                // OpenSSL copies the selection.
                selected.pointee = offered + range.lowerBound
                selectedLength.pointee = UInt8(range.count)
                return SSL_TLSEXT_ERR_OK
            }, argument)
    }
}

/// Immutable data the C callbacks of one context read through their
/// `void *` argument.
private final class CallbackState: Sendable {
    /// `.pinned` policy: the expected leaf fingerprint.
    let pinnedFingerprint: CertificateFingerprint?
    /// Our ALPN IDs as bytes, most preferred first.
    let applicationProtocols: [[UInt8]]

    init(configuration: TLSConfiguration) throws(TLSError) {
        applicationProtocols = configuration.applicationProtocols.map { Array($0.utf8) }
        guard applicationProtocols.allSatisfy({ (1...255).contains($0.count) }) else {
            throw TLSError(.invalidConfiguration, "ALPN IDs must be 1 to 255 bytes long")
        }
        if case .client(.pinned(let fingerprint)) = configuration.role {
            pinnedFingerprint = fingerprint
        } else {
            pinnedFingerprint = nil
        }
    }

    /// The range, within `offers` (an RFC 7301 protocol name list), of the
    /// first of our IDs found there; `nil` if none is, or the list is malformed.
    func firstSupportedProtocol(in offers: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var offered: [Range<Int>] = []
        var index = 0
        while index < offers.count {
            let end = index + 1 + Int(offers[index])
            guard offers[index] > 0, end <= offers.count else { return nil }
            offered.append(index + 1..<end)
            index = end
        }
        for candidate in applicationProtocols {
            if let match = offered.first(where: { offers[$0].elementsEqual(candidate) }) {
                return match
            }
        }
        return nil
    }
}
