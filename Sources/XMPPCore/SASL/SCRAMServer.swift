/// The server side of a SCRAM exchange (RFC 5802, RFC 7677): a state machine
/// that parses and produces messages and does no I/O.
///
/// The caller drives it in three steps, so that the account lookup between
/// them can be asynchronous:
///
/// 1. `receiveClientFirst(_:)` parses `<auth/>`'s data and returns who is
///    logging in.
/// 2. The caller looks the username up and passes the credentials (or `nil`)
///    to `challenge(credentials:)`, whose result goes in `<challenge/>`.
/// 3. `receiveClientFinal(_:)` checks `<response/>`'s data and returns the
///    `v=` message for `<success/>`.
///
/// An unknown user gets a challenge that looks like a real one (a salt
/// derived from a server secret and the username, the usual iteration count)
/// and fails only at step 3, with the same `not-authorized` as a wrong
/// password, so that probing does not reveal which accounts exist
/// (RFC 5802 §9).
///
/// Failure conditions follow one rule: bad base64 is `incorrect-encoding`
/// (RFC 6120 §6.4.2), broken syntax `malformed-request`, and anything that
/// fails verification `not-authorized`. After a failure or success every
/// further message is `malformed-request`.
public struct SCRAMServer: Sendable {
    private enum State: Sendable {
        case awaitingClientFirst
        case awaitingLookup(ClientFirst)
        case awaitingClientFinal(Verifier)
        case finished
    }

    /// What step 1 learned, kept for steps 2 and 3.
    private struct ClientFirst: Sendable {
        var identity: SASLIdentity
        /// The expected decoded `c=`: the GS2 header plus channel-binding data.
        var channelBinding: [UInt8]
        var clientNonce: String
        var bare: ArraySlice<UInt8>
    }

    /// What step 3 checks the client's proof against.
    private struct Verifier: Sendable {
        var channelBinding: [UInt8]
        var nonce: [UInt8]
        /// `client-first-message-bare "," server-first-message ","`.
        var authMessagePrefix: [UInt8]
        var storedKey: [UInt8]
        var serverKey: [UInt8]
        var isKnownUser: Bool
    }

    /// The mechanism being run.
    public let mechanism: SASLMechanism
    /// The channel binding the client chose (`p=`), once its first message
    /// is parsed; `nil` without one.
    public private(set) var boundChannel: ChannelBindingType?
    private let hashFunction: HashFunction
    private let channelBindings: [ChannelBindingType: [UInt8]]
    private let unknownUserSecret: [UInt8]
    private let unknownUserIterations: Int
    private let serverNonce: String
    /// The XEP-0474 `h=` value, when the stream's advertisement is known.
    private let downgradeHash: String?
    private var state = State.awaitingClientFirst

    /// Starts an exchange.
    ///
    /// - Parameters:
    ///   - mechanism: A SCRAM mechanism; `-PLUS` ones need `channelBindings`.
    ///   - channelBindings: The channel-binding data this connection can
    ///     produce, per type. Non-empty exactly when the stream advertised
    ///     `-PLUS` mechanisms: a client that says `y` ("I could bind, but you
    ///     cannot") is then refused as a downgrade attack (RFC 5802 §6).
    ///     Empty without TLS.
    ///   - unknownUserSecret: A per-server secret, stable across restarts,
    ///     from which fake salts for unknown users are derived; 32 random
    ///     bytes generated once is ideal.
    ///   - unknownUserIterations: The iteration count shown to unknown users;
    ///     use the one new accounts get.
    ///   - advertisement: What the stream advertised, for the XEP-0474
    ///     `h=` attribute of the server-first message; `nil` sends none.
    public init(
        mechanism: SASLMechanism, channelBindings: [ChannelBindingType: [UInt8]] = [:],
        unknownUserSecret: [UInt8],
        unknownUserIterations: Int = SCRAMCredentials.defaultIterations,
        advertisement: SCRAMDowngradeProtection.Advertisement? = nil
    ) {
        self.init(
            mechanism: mechanism, channelBindings: channelBindings,
            unknownUserSecret: unknownUserSecret, unknownUserIterations: unknownUserIterations,
            serverNonce: SCRAMSyntax.makeNonce(), advertisement: advertisement)
    }

    /// Starts an exchange with a chosen server nonce, so that the RFC
    /// examples can be reproduced.
    init(
        mechanism: SASLMechanism, channelBindings: [ChannelBindingType: [UInt8]],
        unknownUserSecret: [UInt8], unknownUserIterations: Int, serverNonce: String,
        advertisement: SCRAMDowngradeProtection.Advertisement? = nil
    ) {
        guard let hashFunction = mechanism.scramHashFunction else {
            preconditionFailure("\(mechanism.rawValue) is not a SCRAM mechanism")
        }
        precondition(
            !mechanism.usesChannelBinding || !channelBindings.isEmpty,
            "\(mechanism.rawValue) needs channel-binding data")
        precondition(!unknownUserSecret.isEmpty, "unknownUserSecret must not be empty")
        precondition(SCRAMSyntax.isNonce(serverNonce.utf8))
        self.mechanism = mechanism
        self.hashFunction = hashFunction
        self.channelBindings = channelBindings
        self.unknownUserSecret = unknownUserSecret
        self.unknownUserIterations = unknownUserIterations
        self.serverNonce = serverNonce
        self.downgradeHash = advertisement.map { SCRAMDowngradeProtection.hash(of: $0, using: hashFunction) }
    }

    /// Step 1: parses the client-first message (`<auth/>`'s data).
    ///
    /// Checks the GS2 header against RFC 5802 §6: `p=` only with a `-PLUS`
    /// mechanism and a type this connection supports; `n` or `y` only
    /// without; `y` refused when we advertised `-PLUS`. Refuses mandatory
    /// extensions (`m=`).
    ///
    /// - Returns: The username, prepared with PRECIS UsernameCaseMapped
    ///   (RFC 8265 §3.3), and the authorization identity if one was given.
    /// - Throws: `SASLFailure.malformedRequest` for bad syntax or an
    ///   unusable username; `.notAuthorized` for a channel-binding downgrade.
    public mutating func receiveClientFirst(
        _ message: [UInt8]
    ) throws(SASLFailure) -> SASLIdentity {
        guard case .awaitingClientFirst = state else {
            state = .finished
            throw .malformedRequest
        }
        state = .finished
        guard String(validating: message, as: UTF8.self) != nil,
            let (header, bare) = GS2Header.parse(message),
            let attributes = SCRAMAttribute.parseList(bare),
            attributes.count >= 2, attributes[0].is("n"), attributes[1].is("r"),
            let name = SASLName.decode(attributes[0].value),
            SCRAMSyntax.isNonce(attributes[1].value)
        else { throw .malformedRequest }

        var channelBinding = header.bytes
        switch header.flag {
        case .unsupported:
            guard !mechanism.usesChannelBinding else { throw .malformedRequest }
        case .notOfferedByServer:
            guard !mechanism.usesChannelBinding else { throw .malformedRequest }
            guard channelBindings.isEmpty else { throw .notAuthorized }
        case .bound(let name):
            guard mechanism.usesChannelBinding,
                let type = ChannelBindingType(rawValue: name),
                let data = channelBindings[type]
            else { throw .malformedRequest }
            channelBinding += data
            boundChannel = type
        }

        // A localpart's bound (RFC 7622 §3.3), checked before any PRECIS
        // work, as PLAIN does.
        guard name.utf8.count <= SASLPlain.maximumUsernameByteCount else { throw .malformedRequest }
        let username: String
        do { username = try PRECIS.usernameCaseMapped(name) } catch { throw .malformedRequest }
        let identity = SASLIdentity(
            username: username, authorizationIdentity: header.authorizationIdentity)
        state = .awaitingLookup(
            ClientFirst(
                identity: identity, channelBinding: channelBinding,
                clientNonce: String(decoding: attributes[1].value, as: UTF8.self), bare: bare))
        return identity
    }

    /// Step 2: produces the server-first message (`<challenge/>`'s data) from
    /// the account's credentials, or from invented ones when `credentials`
    /// is `nil` because the user does not exist.
    ///
    /// - Parameter credentials: The account's credentials for this
    ///   mechanism's hash function, or `nil`.
    public mutating func challenge(credentials: SCRAMCredentials?) -> [UInt8] {
        guard case .awaitingLookup(let clientFirst) = state else {
            preconditionFailure("challenge(credentials:) called out of order")
        }
        let salt: [UInt8]
        let iterations: Int
        let storedKey: [UInt8]
        let serverKey: [UInt8]
        if let credentials {
            precondition(credentials.hashFunction == hashFunction, "credentials for another hash")
            (salt, iterations) = (credentials.salt, credentials.iterations)
            (storedKey, serverKey) = (credentials.storedKey, credentials.serverKey)
        } else {
            // Deterministic, so repeated probes see the same salt; keyed by
            // hash, not mechanism, since a real account shows one salt to
            // SCRAM-SHA-1 and SCRAM-SHA-1-PLUS alike. The keys are random, so
            // the same verification runs and fails.
            let label =
                Array(hashFunction.rawValue.utf8) + [0] + Array(clientFirst.identity.username.utf8)
            salt = Array(
                hashFunction.hmac(key: unknownUserSecret, message: label)
                    .prefix(SCRAMCredentials.saltByteCount))
            iterations = unknownUserIterations
            storedKey = Crypto.randomBytes(count: hashFunction.outputByteCount)
            serverKey = Crypto.randomBytes(count: hashFunction.outputByteCount)
        }
        let nonce = clientFirst.clientNonce + serverNonce
        var serverFirst = Array("r=\(nonce),s=\(Base64.encode(salt)),i=\(iterations)".utf8)
        if let downgradeHash { serverFirst += Array(",h=\(downgradeHash)".utf8) }
        let comma: [UInt8] = [UInt8(ascii: ",")]
        let authMessagePrefix: [UInt8] = Array(clientFirst.bare) + comma + serverFirst + comma
        state = .awaitingClientFinal(
            Verifier(
                channelBinding: clientFirst.channelBinding, nonce: Array(nonce.utf8),
                authMessagePrefix: authMessagePrefix, storedKey: storedKey, serverKey: serverKey,
                isKnownUser: credentials != nil))
        return serverFirst
    }

    /// Step 3: verifies the client-final message (`<response/>`'s data).
    ///
    /// Checks that `c=` repeats the GS2 header (and channel-binding data),
    /// that `r=` is exactly the client nonce followed by ours, and that the
    /// proof `p=` was made from the password, comparing in constant time.
    ///
    /// - Returns: The server-final message `v=ServerSignature`, which the
    ///   server must send inside `<success/>` (RFC 6120 §6.3.10).
    /// - Throws: `SASLFailure.incorrectEncoding`, `.malformedRequest` or
    ///   `.notAuthorized`.
    public mutating func receiveClientFinal(_ message: [UInt8]) throws(SASLFailure) -> [UInt8] {
        guard case .awaitingClientFinal(let verifier) = state else {
            state = .finished
            throw .malformedRequest
        }
        state = .finished
        guard let attributes = SCRAMAttribute.parseList(message[...]),
            attributes.count >= 3, attributes[0].is("c"), attributes[1].is("r"),
            let proofAttribute = attributes.last, proofAttribute.is("p")
        else { throw .malformedRequest }

        let channelBinding: [UInt8]
        let proof: [UInt8]
        do {
            channelBinding = try Base64.decode(utf8: attributes[0].value)
            proof = try Base64.decode(utf8: proofAttribute.value)
        } catch {
            throw .incorrectEncoding
        }
        guard Crypto.constantTimeEquals(channelBinding, verifier.channelBinding),
            attributes[1].value.elementsEqual(verifier.nonce),
            proof.count == hashFunction.outputByteCount
        else { throw .notAuthorized }

        // client-final-message-without-proof: everything before ",p=".
        let withoutProof = message[..<(proofAttribute.value.startIndex - 3)]
        let authMessage = verifier.authMessagePrefix + withoutProof
        let clientSignature = hashFunction.hmac(key: verifier.storedKey, message: authMessage)
        let clientKey = SCRAMSyntax.xor(proof, clientSignature)
        let proofIsValid = Crypto.constantTimeEquals(
            hashFunction.hash(clientKey), verifier.storedKey)
        guard proofIsValid, verifier.isKnownUser else { throw .notAuthorized }

        let serverSignature = hashFunction.hmac(key: verifier.serverKey, message: authMessage)
        return Array("v=\(Base64.encode(serverSignature))".utf8)
    }
}

extension SCRAMServer: CustomStringConvertible, CustomReflectable {
    /// Names the mechanism only: the state holds keys.
    public var description: String { "SCRAMServer(\(mechanism.rawValue))" }
    public var customMirror: Mirror { Mirror(self, children: ["mechanism": mechanism]) }
}
