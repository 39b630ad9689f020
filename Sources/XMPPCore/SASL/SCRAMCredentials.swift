/// What a server stores for a SCRAM account instead of the password
/// (RFC 5802 §3, §5): the salt, the iteration count, `StoredKey` and `ServerKey`.
///
/// `StoredKey` verifies a client's proof and `ServerKey` signs the server's
/// answer; neither lets a thief log in to another server, and recovering the
/// password from them costs a brute-force search through PBKDF2. One account
/// has one value per hash function (SHA-1 and SHA-256), each with its own salt.
public struct SCRAMCredentials: Sendable, Hashable {
    /// The lowest iteration count we create or, as a client, accept. RFC 7677
    /// §4 asks for at least 4096, and XMPPFramework refuses anything below it.
    public static let minimumIterations = 4096
    /// The iteration count used when none is given. Deployments may raise it;
    /// every login with a password then costs the client that many HMACs.
    public static let defaultIterations = 4096
    /// The length of a freshly generated salt, in bytes (RFC 7677 §4's example
    /// uses 16).
    public static let saltByteCount = 16

    /// The hash these keys were derived with.
    public let hashFunction: HashFunction
    /// The salt, sent to the client as `s=`.
    public let salt: [UInt8]
    /// The PBKDF2 iteration count, sent to the client as `i=`.
    public let iterations: Int
    /// `StoredKey := H(ClientKey)`.
    public let storedKey: [UInt8]
    /// `ServerKey := HMAC(SaltedPassword, "Server Key")`.
    public let serverKey: [UInt8]

    /// Re-creates stored credentials, or returns `nil` if the parts do not fit
    /// together (a key of the wrong length, an empty salt, no iterations), as
    /// a damaged record would.
    public init?(
        hashFunction: HashFunction, salt: [UInt8], iterations: Int, storedKey: [UInt8],
        serverKey: [UInt8]
    ) {
        guard !salt.isEmpty, iterations >= 1,
            storedKey.count == hashFunction.outputByteCount,
            serverKey.count == hashFunction.outputByteCount
        else { return nil }
        self.hashFunction = hashFunction
        self.salt = salt
        self.iterations = iterations
        self.storedKey = storedKey
        self.serverKey = serverKey
    }

    /// Derives credentials from a password, with a new random salt.
    ///
    /// - Parameters:
    ///   - password: The password; it is prepared with PRECIS OpaqueString
    ///     (RFC 8265 §4.2) first, as every client must do too.
    ///   - hashFunction: SHA-1 for `SCRAM-SHA-1`, SHA-256 for `SCRAM-SHA-256`.
    ///   - iterations: The PBKDF2 iteration count, at least `minimumIterations`.
    /// - Throws: `PRECISError` when the password has no OpaqueString form
    ///   (for example, it is empty).
    public init(
        password: String, hashFunction: HashFunction, iterations: Int = defaultIterations
    ) throws(PRECISError) {
        precondition(iterations >= Self.minimumIterations, "too few SCRAM iterations")
        try self.init(
            password: password, hashFunction: hashFunction,
            salt: Crypto.randomBytes(count: Self.saltByteCount), iterations: iterations)
    }

    /// Derives credentials from a password and a given salt, so that the RFC
    /// examples can be reproduced.
    init(
        password: String, hashFunction: HashFunction, salt: [UInt8], iterations: Int
    ) throws(PRECISError) {
        let keys = SCRAMClientKeys(
            preparedPassword: try PRECIS.opaqueString(password), hashFunction: hashFunction,
            salt: salt, iterations: iterations)
        self.init(
            hashFunction: hashFunction, salt: salt, iterations: iterations,
            storedKey: hashFunction.hash(keys.clientKey), serverKey: keys.serverKey)!
    }

    /// Whether `password` is the one these credentials were made from, for
    /// mechanisms that receive the password itself (PLAIN, RFC 4616 §3).
    ///
    /// A password without a PRECIS OpaqueString form never matches.
    public func matches(password: String) -> Bool {
        guard let prepared = try? PRECIS.opaqueString(password) else { return false }
        let keys = SCRAMClientKeys(
            preparedPassword: prepared, hashFunction: hashFunction, salt: salt,
            iterations: iterations)
        return Crypto.constantTimeEquals(hashFunction.hash(keys.clientKey), storedKey)
    }
}

/// What a client can save after logging in so that it can log in again
/// without keeping the password (RFC 5802 §5.1: a client may cache
/// `ClientKey` and `ServerKey` with the salt and iteration count).
///
/// These keys let whoever holds them log in to this one account on this one
/// server as long as the salt is unchanged, so store them as carefully as a
/// session token. If the server changes the salt or iteration count, the
/// exchange stops with `SASLClientError.savedKeysOutdated` and the password
/// is needed once more.
public struct SCRAMClientKeys: Sendable, Hashable {
    /// The hash the keys were derived with.
    public let hashFunction: HashFunction
    /// The salt the server sent.
    public let salt: [UInt8]
    /// The iteration count the server sent.
    public let iterations: Int
    /// `ClientKey := HMAC(SaltedPassword, "Client Key")`.
    public let clientKey: [UInt8]
    /// `ServerKey := HMAC(SaltedPassword, "Server Key")`.
    public let serverKey: [UInt8]

    /// Re-creates saved keys, or returns `nil` if the parts do not fit together.
    public init?(
        hashFunction: HashFunction, salt: [UInt8], iterations: Int, clientKey: [UInt8],
        serverKey: [UInt8]
    ) {
        guard !salt.isEmpty, iterations >= 1,
            clientKey.count == hashFunction.outputByteCount,
            serverKey.count == hashFunction.outputByteCount
        else { return nil }
        self.hashFunction = hashFunction
        self.salt = salt
        self.iterations = iterations
        self.clientKey = clientKey
        self.serverKey = serverKey
    }

    /// Derives the keys from a password (RFC 5802 §3):
    /// `SaltedPassword := Hi(Normalize(password), salt, i)`, then the two
    /// HMACs of it.
    ///
    /// - Parameter preparedPassword: `Normalize(password)`, which for XMPP is
    ///   the PRECIS OpaqueString form (RFC 8265 §4.2).
    init(
        preparedPassword prepared: String, hashFunction: HashFunction, salt: [UInt8],
        iterations: Int
    ) {
        let saltedPassword = hashFunction.pbkdf2(
            password: Array(prepared.utf8), salt: salt, iterations: iterations)
        self.init(
            hashFunction: hashFunction, salt: salt, iterations: iterations,
            clientKey: hashFunction.hmac(key: saltedPassword, message: Array("Client Key".utf8)),
            serverKey: hashFunction.hmac(key: saltedPassword, message: Array("Server Key".utf8)))!
    }
}

// Keys are secrets: keep them out of logs, `print`, string interpolation and `dump`.

extension SCRAMCredentials: CustomStringConvertible, CustomReflectable {
    public var description: String {
        "SCRAMCredentials(\(hashFunction.rawValue), i=\(iterations), keys: <redacted>)"
    }
    public var customMirror: Mirror {
        Mirror(self, children: ["hashFunction": hashFunction, "iterations": iterations])
    }
}

extension SCRAMClientKeys: CustomStringConvertible, CustomReflectable {
    public var description: String {
        "SCRAMClientKeys(\(hashFunction.rawValue), i=\(iterations), keys: <redacted>)"
    }
    public var customMirror: Mirror {
        Mirror(self, children: ["hashFunction": hashFunction, "iterations": iterations])
    }
}
