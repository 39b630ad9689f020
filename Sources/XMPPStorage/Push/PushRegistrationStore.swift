/// One push service a user enabled (XEP-0357 §5): the app server's XMPP
/// push service and its node, with what the client asked to be sent along
/// with each notification.
public struct PushRegistration: Sendable, Hashable {
    /// The push service's JID, normalized.
    public var service: String
    /// The node on the push service the notifications are published to
    /// (empty when the client named none).
    public var node: String
    /// The client's publish options (a `jabber:x:data` submit form, as XML):
    /// credentials the app server wants back with each notification. They
    /// go to the push service only, never back to a client.
    public var publishOptions: String?
    /// How many notifications in a row the push service answered with an
    /// error (XEP-0357 §7.1).
    public var failures: Int

    /// Creates a registration.
    public init(service: String, node: String, publishOptions: String?, failures: Int = 0) {
        self.service = service
        self.node = node
        self.publishOptions = publishOptions
        self.failures = failures
    }
}

/// The push services the server's users enabled (XEP-0357), keyed by the
/// service's JID and node within each account.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts; services and nodes are compared
/// byte for byte. An unknown username reads as an account without
/// registrations; `register(_:for:maxRegistrations:)` throws
/// `UnknownAccountError` for it. Replacing the account's credentials or
/// deleting the account deletes its registrations.
public protocol PushRegistrationStore: AnyObject {
    /// Adds `registration`, or replaces the account's registration with the
    /// same service and node (§5: the last request's options win), with no
    /// failures counted.
    ///
    /// - Returns: `false`, storing nothing, when it would be new and the
    ///   account has `maxRegistrations` already.
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func register(_ registration: PushRegistration, for username: String, maxRegistrations: Int) throws -> Bool

    /// The registrations of `username`, by service, then node.
    func registrations(of username: String) throws -> [PushRegistration]

    /// The usernames that have at least one registration.
    func usernamesWithRegistrations() throws -> [String]

    /// Removes the registrations of `username` for `service`: the one with
    /// `node`, or all of them when `node` is nil (§6).
    ///
    /// - Returns: How many it removed.
    @discardableResult
    func remove(service: String, node: String?, of username: String) throws -> Int

    /// Removes every registration of `username`.
    func removeAll(of username: String) throws

    /// Counts one more failure of the registration with `service` and
    /// `node`, and removes it once it has failed `limit` times in a row.
    ///
    /// - Returns: The failures counted now (0 when there is no such
    ///   registration); at `limit` or above, it is gone.
    func recordFailure(service: String, node: String, of username: String, limit: Int) throws -> Int

    /// Forgets the failures of the registration with `service` and `node`
    /// (its push service took a notification).
    func clearFailures(service: String, node: String, of username: String) throws
}
