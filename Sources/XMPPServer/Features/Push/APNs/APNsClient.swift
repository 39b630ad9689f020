import Foundation
import XMPPCore
import XMPPNet

/// Sends notifications to Apple's push service (APNs) over one HTTP/2
/// connection, kept open and reopened when it closes, with token-based
/// authentication: a provider token (an ES256 JSON Web Token, signed with
/// the developer's key) renewed every 40 minutes, as Apple asks (at most
/// every 20, at least every 60).
///
/// A notification that fails for a passing reason (no connection, 429,
/// 5xx, a stream the server refused) is sent again after 1, 2, then 4
/// seconds, then given up; routing never waits for it. At most
/// `maxQueued` notifications wait at once; beyond, new ones are dropped.
/// Everything runs on one loop; `send` may be called from any.
final class APNsClient: @unchecked Sendable {
    // @unchecked: every stored property but the constants is touched only
    // on `loop` (`send` hops there).

    /// What became of a notification.
    enum Outcome: Sendable, Equatable {
        /// APNs accepted it.
        case delivered
        /// The device token is no longer valid (410, or 400 `BadDeviceToken`
        /// or `DeviceTokenNotForTopic`): forget the registration.
        case unregistered(reason: String)
        /// It could not be delivered: a refusal that another try would not
        /// change (a setting of ours, such as the topic), or a passing
        /// failure that outlasted the retries. Nothing the device did.
        case failed(reason: String)
    }

    /// One notification for one device.
    struct Notification: Sendable {
        /// The device token, hex.
        var deviceToken: String
        /// The JSON payload.
        var payload: [UInt8]
        var pushType: ServerConfig.APNs.PushType
        /// Notifications with the same id replace each other on the device.
        var collapseID: String?
    }

    static let retryDelays: [Duration] = [.seconds(1), .seconds(2), .seconds(4)]
    static let maxQueued = 10_000
    static let tokenLifetime = Duration.seconds(40 * 60)
    static let requestTimeout = Duration.seconds(30)

    private let loop: EventLoop
    private let settings: ServerConfig.APNs
    private let host: String
    private let port: UInt16
    private let tlsContext: TLSContext
    private let signer: ES256Signer
    private let log: Logger
    private var connection: HTTP2Connection?
    private var token: (jwt: String, issued: ContinuousClock.Instant)?
    private var outstanding = 0

    /// A client for `settings`, sending to `endpoint` (`https://HOST[:PORT]`).
    /// - Throws: `APNsSetupError` when the key file is missing, readable by
    ///   others or not a P-256 key, or the endpoint or CA file is unusable.
    init(settings: ServerConfig.APNs, endpoint: String, log: Logger, on loop: EventLoop) throws {
        self.loop = loop
        self.settings = settings
        self.log = log
        let authority = endpoint.dropFirst("https://".count).split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]"), let port = UInt16(authority[authority.index(after: colon)...]) {
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = authority
            port = 443
        }
        guard !host.isEmpty else { throw APNsSetupError("apns_endpoint has no host: \(endpoint)") }
        signer = try Self.readKey(settings.keyFile)
        var roots: [String] = []
        if !settings.caFile.isEmpty {
            guard let pem = try? String(contentsOfFile: settings.caFile, encoding: .utf8) else {
                throw APNsSetupError("cannot read apns_ca_file \(settings.caFile)")
            }
            roots = [pem]
        }
        var configuration = TLSConfiguration.client(
            verification: .requireValid(hostname: host.trimmingCharacters(in: ["[", "]"]), additionalTrustRootsPEM: roots))
        configuration.applicationProtocols = ["h2"]
        do {
            tlsContext = try TLSContext(configuration: configuration)
        } catch {
            throw APNsSetupError("cannot set up TLS for APNs: \(error)")
        }
    }

    /// Reads the developer's key, refusing one that others may read.
    private static func readKey(_ path: String) throws -> ES256Signer {
        var status = stat()
        guard stat(path, &status) == 0 else { throw APNsSetupError("cannot read apns_key_file \(path)") }
        guard status.st_mode & 0o077 == 0 else {
            throw APNsSetupError(
                "apns_key_file \(path) may be read by others (mode \(String(status.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw APNsSetupError("cannot read apns_key_file \(path)")
        }
        do {
            return try ES256Signer(privateKeyPEM: pem)
        } catch {
            throw APNsSetupError("apns_key_file \(path) is not an APNs key (.p8): \(error)")
        }
    }

    /// Sends `notification`; `completion` runs on this client's loop once
    /// it was delivered, refused or given up.
    func send(_ notification: Notification, then completion: @escaping @Sendable (Outcome) -> Void) {
        loop.execute { [self] in
            guard outstanding < Self.maxQueued else {
                log.notice("APNs: \(outstanding) notifications waiting; one dropped")
                return completion(.failed(reason: "too many notifications waiting"))
            }
            outstanding += 1
            attempt(notification, retry: 0, tokenRenewed: false) { [self] outcome in
                outstanding -= 1
                completion(outcome)
            }
        }
    }

    private func attempt(
        _ notification: Notification, retry: Int, tokenRenewed: Bool, then completion: @escaping (Outcome) -> Void
    ) {
        let connection = usableConnection()
        let timer = loop.schedule(after: Self.requestTimeout) { [weak connection] in
            connection?.close()
        }
        connection.send(headers(for: notification), body: notification.payload) { [self] result in
            timer.cancel()
            switch result {
            case .success(let response):
                let reason = Self.reason(in: response.body)
                switch response.status {
                case 200:
                    completion(.delivered)
                case 410,
                    400 where ["BadDeviceToken", "DeviceTokenNotForTopic"].contains(reason):
                    completion(.unregistered(reason: reason ?? "Unregistered"))
                case 403 where reason == "ExpiredProviderToken" && !tokenRenewed:
                    token = nil
                    attempt(notification, retry: retry, tokenRenewed: true, then: completion)
                case 429, 500...599:
                    again(notification, retry: retry, "\(response.status) \(reason ?? "")", completion)
                default:
                    log.error("APNs refused a notification: \(response.status) \(reason ?? "")")
                    completion(.failed(reason: "\(response.status) \(reason ?? "")"))
                }
            case .failure(let failure):
                again(notification, retry: retry, failure.reason, completion)
            }
        }
    }

    /// Tries again after the next delay, or gives up.
    private func again(
        _ notification: Notification, retry: Int, _ reason: String, _ completion: @escaping (Outcome) -> Void
    ) {
        guard retry < Self.retryDelays.count else {
            log.notice("APNs: a notification given up after \(retry + 1) tries: \(reason)")
            return completion(.failed(reason: reason))
        }
        log.info("APNs: \(reason); trying again in \(Self.retryDelays[retry])")
        _ = loop.schedule(after: Self.retryDelays[retry]) { [self] in
            attempt(notification, retry: retry + 1, tokenRenewed: false, then: completion)
        }
    }

    /// The open connection, or a new one.
    private func usableConnection() -> HTTP2Connection {
        if let connection, connection.isUsable { return connection }
        let authority = port == 443 ? host : "\(host):\(port)"
        let fresh = HTTP2Connection(
            host: host.trimmingCharacters(in: ["[", "]"]), port: port, authority: authority, tls: tlsContext, on: loop)
        fresh.onClose = { [weak self, weak fresh] in
            if let self, self.connection === fresh { self.connection = nil }
        }
        connection = fresh
        return fresh
    }

    /// The request headers (Apple's "Sending notification requests to APNs").
    private func headers(for notification: Notification) -> [HPACK.Header] {
        var headers = [
            HPACK.Header(":method", "POST"), HPACK.Header(":path", "/3/device/\(notification.deviceToken)"),
            HPACK.Header("authorization", "bearer \(providerToken())"),
            HPACK.Header("apns-topic", settings.topic),
            HPACK.Header("apns-push-type", notification.pushType.rawValue),
            HPACK.Header("apns-priority", notification.pushType == .alert ? "10" : "5"),
            HPACK.Header("apns-expiration", String(Int(Date().timeIntervalSince1970) + 86_400)),
        ]
        if let collapseID = notification.collapseID { headers.append(HPACK.Header("apns-collapse-id", collapseID)) }
        return headers
    }

    /// The provider token, renewed when it is `tokenLifetime` old.
    private func providerToken() -> String {
        if let token, ContinuousClock.now - token.issued < Self.tokenLifetime { return token.jwt }
        let header = #"{"alg":"ES256","kid":"\#(settings.keyID)"}"#
        let claims = #"{"iss":"\#(settings.teamID)","iat":\#(Int(Date().timeIntervalSince1970))}"#
        let signingInput = Base64.encodeURLSafe(Array(header.utf8)) + "." + Base64.encodeURLSafe(Array(claims.utf8))
        let signature = (try? signer.sign(Array(signingInput.utf8))) ?? []
        let jwt = signingInput + "." + Base64.encodeURLSafe(signature)
        token = (jwt, ContinuousClock.now)
        return jwt
    }

    /// The `reason` of an APNs error body.
    private static func reason(in body: [UInt8]) -> String? {
        guard !body.isEmpty, let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return nil
        }
        return object["reason"] as? String
    }
}

/// Why the built-in APNs service cannot start.
struct APNsSetupError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
