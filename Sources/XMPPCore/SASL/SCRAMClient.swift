/// The client side of a SCRAM exchange (RFC 5802, RFC 7677): a state machine
/// that produces and checks messages and does no I/O.
///
/// Send `clientFirstMessage` in `<auth/>`, pass the `<challenge/>` data to
/// `receiveServerFirst(_:)` and send its result in `<response/>`, then pass
/// the `<success/>` data to `receiveServerFinal(_:)`. Only when that returns
/// has the server proved it knows the password; then `keys` holds what to
/// save for logging in again without the password.
public struct SCRAMClient: Sendable {
    /// What the client proves knowledge of.
    public enum Secret: Sendable, Hashable {
        /// The password, prepared with PRECIS OpaqueString when the client is
        /// created and dropped once the keys are derived from it.
        case password(String)
        /// Keys saved from an earlier login.
        case keys(SCRAMClientKeys)
    }

    /// The client's channel-binding stance, which selects the GS2 flag
    /// (RFC 5802 §6).
    public enum ChannelBinding: Sendable, Hashable {
        /// `n`: this client cannot bind (no TLS, or no binding data).
        case unsupported
        /// `y`: this client could bind, but the server advertised no `-PLUS`
        /// mechanism; a server that does support binding then refuses, which
        /// catches an attacker who stripped `-PLUS` from the list.
        case notOfferedByServer
        /// `p=`: bind to the channel with this type and data; only with a
        /// `-PLUS` mechanism.
        case bound(ChannelBindingType, data: [UInt8])
    }

    private enum State: Sendable {
        case awaitingServerFirst(Secret)
        case awaitingServerFinal(expectedSignature: [UInt8], keys: SCRAMClientKeys)
        case finished
    }

    /// The largest iteration count accepted by default: a server asking for
    /// more than this is more likely hostile than careful.
    public static let defaultMaximumIterations = 1_000_000

    /// The mechanism being run.
    public let mechanism: SASLMechanism
    /// The client-first message, for `<auth/>`.
    public let clientFirstMessage: [UInt8]
    /// The keys to save after a successful login; `nil` until then.
    public private(set) var keys: SCRAMClientKeys?
    /// What the stream advertised, to check the server's XEP-0474 `h=`
    /// against; `nil` skips the check.
    public var advertisement: SCRAMDowngradeProtection.Advertisement?
    /// Whether the server's `h=` matched `advertisement`: the mechanism and
    /// channel-binding lists reached us as the server sent them.
    public private(set) var advertisementVerified = false

    private let hashFunction: HashFunction
    /// The GS2 header plus channel-binding data, sent back base64 in `c=`.
    private let channelBindingInput: [UInt8]
    private let clientNonce: String
    /// `client-first-message-bare`, the start of `AuthMessage`.
    private let clientFirstBare: [UInt8]
    private let iterationRange: ClosedRange<Int>
    private var state: State

    /// Starts an exchange.
    ///
    /// - Parameters:
    ///   - mechanism: A SCRAM mechanism.
    ///   - username: The account's username (for XMPP, the JID's localpart);
    ///     prepared with PRECIS UsernameCaseMapped (RFC 8265 §3.3).
    ///   - authorizationIdentity: A JID to act as (RFC 6120 §6.3.8); usually `nil`.
    ///   - secret: The password, or keys saved from an earlier login.
    ///   - channelBinding: `.bound` exactly when `mechanism` is `-PLUS`.
    ///   - minimumIterations: The fewest PBKDF2 iterations to accept from the
    ///     server; 4096 by default (RFC 7677 §4).
    ///   - maximumIterations: The most to accept.
    /// - Throws: `SASLClientError.invalidUsername` or `.invalidPassword` when
    ///   PRECIS rejects them.
    public init(
        mechanism: SASLMechanism, username: String, authorizationIdentity: String? = nil,
        secret: Secret, channelBinding: ChannelBinding = .unsupported,
        minimumIterations: Int = SCRAMCredentials.minimumIterations,
        maximumIterations: Int = defaultMaximumIterations
    ) throws(SASLClientError) {
        try self.init(
            mechanism: mechanism, username: username, authorizationIdentity: authorizationIdentity,
            secret: secret, channelBinding: channelBinding,
            iterationRange: minimumIterations...maximumIterations,
            clientNonce: SCRAMSyntax.makeNonce())
    }

    /// Starts an exchange with a chosen nonce, so that the RFC examples can
    /// be reproduced.
    init(
        mechanism: SASLMechanism, username: String, authorizationIdentity: String?,
        secret: Secret, channelBinding: ChannelBinding, iterationRange: ClosedRange<Int>,
        clientNonce: String
    ) throws(SASLClientError) {
        guard let hashFunction = mechanism.scramHashFunction else {
            preconditionFailure("\(mechanism.rawValue) is not a SCRAM mechanism")
        }
        precondition(SCRAMSyntax.isNonce(clientNonce.utf8))
        let flag: GS2Header.ChannelBindingFlag
        var bindingData: [UInt8] = []
        switch channelBinding {
        case .unsupported: flag = .unsupported
        case .notOfferedByServer: flag = .notOfferedByServer
        case .bound(let type, let data):
            flag = .bound(name: type.rawValue)
            bindingData = data
        }
        precondition(
            mechanism.usesChannelBinding == (flag != .unsupported && flag != .notOfferedByServer),
            "-PLUS mechanisms need .bound channel binding, and only they take it")

        let preparedUsername: String
        do { preparedUsername = try PRECIS.usernameCaseMapped(username) } catch {
            throw .invalidUsername
        }
        switch secret {
        case .password(let password):
            do {
                state = .awaitingServerFirst(.password(try PRECIS.opaqueString(password)))
            } catch {
                throw .invalidPassword
            }
        case .keys(let keys):
            precondition(keys.hashFunction == hashFunction, "saved keys for another hash")
            state = .awaitingServerFirst(secret)
        }

        let header = GS2Header(flag: flag, authorizationIdentity: authorizationIdentity)
        self.mechanism = mechanism
        self.hashFunction = hashFunction
        self.channelBindingInput = header.bytes + bindingData
        self.clientNonce = clientNonce
        self.iterationRange = iterationRange
        self.clientFirstBare =
            Array("n=".utf8) + SASLName.encode(preparedUsername) + Array(",r=\(clientNonce)".utf8)
        self.clientFirstMessage = header.bytes + clientFirstBare
    }

    /// Checks the server-first message (`<challenge/>`'s data) and returns
    /// the client-final message with the proof, for `<response/>`.
    ///
    /// - Throws: `SASLClientError`: the nonce does not extend ours, the salt
    ///   is not base64, the iteration count is out of range, the saved keys
    ///   are outdated, or the message is malformed or out of order.
    public mutating func receiveServerFirst(
        _ message: [UInt8]
    ) throws(SASLClientError) -> [UInt8] {
        guard case .awaitingServerFirst(let secret) = state else {
            state = .finished
            throw .unexpectedServerMessage
        }
        state = .finished
        // A leading m= is a mandatory extension we do not know: refuse it.
        guard let attributes = SCRAMAttribute.parseList(message[...]),
            attributes.count >= 3, attributes[0].is("r"), attributes[1].is("s"),
            attributes[2].is("i"), SCRAMSyntax.isNonce(attributes[0].value),
            let salt = try? Base64.decode(utf8: attributes[1].value), !salt.isEmpty,
            let iterations = SCRAMSyntax.positiveNumber(attributes[2].value)
        else { throw .malformedServerMessage }
        let nonce = attributes[0].value
        guard nonce.count > clientNonce.utf8.count, nonce.starts(with: clientNonce.utf8) else {
            throw .nonceMismatch
        }
        guard iterations >= iterationRange.lowerBound else {
            throw .iterationCountTooLow(iterations)
        }
        guard iterations <= iterationRange.upperBound else {
            throw .iterationCountTooHigh(iterations)
        }
        if let advertisement, let sent = attributes.dropFirst(3).first(where: { $0.is("h") }) {
            let expected = SCRAMDowngradeProtection.hash(of: advertisement, using: hashFunction)
            guard sent.value.elementsEqual(expected.utf8) else { throw .downgradeDetected }
            advertisementVerified = true
        }

        let keys: SCRAMClientKeys
        switch secret {
        case .password(let prepared):
            keys = SCRAMClientKeys(
                preparedPassword: prepared, hashFunction: hashFunction, salt: salt,
                iterations: iterations)
        case .keys(let saved):
            guard saved.salt == salt, saved.iterations == iterations else {
                throw .savedKeysOutdated
            }
            keys = saved
        }

        let withoutProof =
            Array("c=\(Base64.encode(channelBindingInput)),r=".utf8) + nonce
        let comma = [UInt8(ascii: ",")]
        let authMessage = clientFirstBare + comma + message + comma + withoutProof
        let storedKey = hashFunction.hash(keys.clientKey)
        let clientSignature = hashFunction.hmac(key: storedKey, message: authMessage)
        let proof = SCRAMSyntax.xor(keys.clientKey, clientSignature)
        state = .awaitingServerFinal(
            expectedSignature: hashFunction.hmac(key: keys.serverKey, message: authMessage),
            keys: keys)
        return withoutProof + Array(",p=\(Base64.encode(proof))".utf8)
    }

    /// Checks the server-final message (`<success/>`'s data): `v=` must be
    /// the signature only a server holding our `ServerKey` can make.
    ///
    /// - Throws: `SASLClientError.serverError` for `e=`,
    ///   `.serverSignatureMismatch` for a wrong `v=`, or
    ///   `.malformedServerMessage` / `.unexpectedServerMessage`.
    public mutating func receiveServerFinal(_ message: [UInt8]) throws(SASLClientError) {
        guard case .awaitingServerFinal(let expectedSignature, let keys) = state else {
            state = .finished
            throw .unexpectedServerMessage
        }
        state = .finished
        guard let attributes = SCRAMAttribute.parseList(message[...]), let first = attributes.first
        else { throw .malformedServerMessage }
        if first.is("e") {
            throw .serverError(String(decoding: first.value, as: UTF8.self))
        }
        guard first.is("v"), let signature = try? Base64.decode(utf8: first.value) else {
            throw .malformedServerMessage
        }
        guard Crypto.constantTimeEquals(signature, expectedSignature) else {
            throw .serverSignatureMismatch
        }
        self.keys = keys
    }
}

extension SCRAMClient.Secret: CustomStringConvertible, CustomReflectable {
    /// Says which kind of secret, never the secret.
    public var description: String {
        switch self {
        case .password: "password(<redacted>)"
        case .keys: "keys(<redacted>)"
        }
    }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

extension SCRAMClient: CustomStringConvertible, CustomReflectable {
    /// Names the mechanism only: the state holds the password or keys.
    public var description: String { "SCRAMClient(\(mechanism.rawValue))" }
    public var customMirror: Mirror { Mirror(self, children: ["mechanism": mechanism]) }
}
