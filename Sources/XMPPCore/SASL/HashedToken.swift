/// A Hashed Token SASL mechanism (draft-schmaus-kitten-sasl-ht), the
/// one-round-trip mechanisms XEP-0484 (FAST) logs in with: the client
/// proves it holds a token the server issued, bound to the TLS channel
/// where the mechanism says so.
public enum FASTMechanism: String, Sendable, Hashable, CaseIterable {
    /// HMAC-SHA-256, bound to the server's certificate (RFC 5929).
    case sha256ServerEndPoint = "HT-SHA-256-ENDP"
    /// HMAC-SHA-256, bound to the TLS exporter (RFC 9266).
    case sha256Exporter = "HT-SHA-256-EXPR"
    /// HMAC-SHA-256 without channel binding.
    case sha256None = "HT-SHA-256-NONE"

    /// The channel binding the mechanism includes, or `nil` for `-NONE`.
    public var channelBinding: ChannelBindingType? {
        switch self {
        case .sha256ServerEndPoint: .tlsServerEndPoint
        case .sha256Exporter: .tlsExporter
        case .sha256None: nil
        }
    }

    /// The hash the mechanism's HMAC runs on.
    public var hashFunction: HashFunction { .sha256 }
}

/// The two messages of a Hashed Token exchange. The client sends the
/// username, a NUL, then HMAC(token, "Initiator" ‖ channel-binding data);
/// the server answers, in its success, with HMAC(token, "Responder" ‖
/// channel-binding data), proving it knows the token too. The token is the
/// UTF-8 of the `token` attribute the server issued.
public enum HashedToken {
    /// The longest username accepted, as for the other mechanisms.
    private static let maximumUsernameByteCount = SASLPlain.maximumUsernameByteCount

    /// The client's message: `username NUL HMAC(token, "Initiator" ‖ cb)`.
    public static func initiatorMessage(
        _ mechanism: FASTMechanism, username: String, token: [UInt8], channelBinding: [UInt8]
    ) -> [UInt8] {
        Array(username.utf8) + [0] + proof(mechanism, "Initiator", token: token, channelBinding: channelBinding)
    }

    /// The server's answer: `HMAC(token, "Responder" ‖ cb)`.
    public static func responderMessage(
        _ mechanism: FASTMechanism, token: [UInt8], channelBinding: [UInt8]
    ) -> [UInt8] {
        proof(mechanism, "Responder", token: token, channelBinding: channelBinding)
    }

    /// Splits the client's message into the username, prepared with PRECIS
    /// UsernameCaseMapped, and the proof, unchecked.
    ///
    /// - Throws: `SASLFailure.malformedRequest` without a NUL, with a proof
    ///   of the wrong length, or with an unusable username.
    public static func parseInitiator(
        _ message: [UInt8], _ mechanism: FASTMechanism
    ) throws(SASLFailure) -> (username: String, proof: [UInt8]) {
        guard let separator = message.firstIndex(of: 0),
            message.count - separator - 1 == mechanism.hashFunction.outputByteCount,
            (1...maximumUsernameByteCount).contains(separator),
            let name = String(validating: message[..<separator], as: UTF8.self)
        else { throw .malformedRequest }
        let username: String
        do { username = try PRECIS.usernameCaseMapped(name) } catch { throw .malformedRequest }
        return (username, Array(message[(separator + 1)...]))
    }

    /// Whether `proof` is the initiator proof for `token`, compared in
    /// constant time.
    public static func verify(
        _ proof: [UInt8], _ mechanism: FASTMechanism, token: [UInt8], channelBinding: [UInt8]
    ) -> Bool {
        Crypto.constantTimeEquals(
            proof, Self.proof(mechanism, "Initiator", token: token, channelBinding: channelBinding))
    }

    private static func proof(
        _ mechanism: FASTMechanism, _ label: String, token: [UInt8], channelBinding: [UInt8]
    ) -> [UInt8] {
        mechanism.hashFunction.hmac(key: token, message: Array(label.utf8) + channelBinding)
    }
}
