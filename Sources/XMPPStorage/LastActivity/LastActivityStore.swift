/// When a user was last seen going offline, and what they said then
/// (XEP-0012: Last Activity, §3).
public struct LastLogout: Sendable, Hashable {
    /// When, in seconds since 1970-01-01 00:00 UTC, as the caller gave it.
    public var timestamp: Int
    /// The `<status/>` of the user's last unavailable presence, if any.
    public var status: String?

    /// Creates a record.
    public init(timestamp: Int, status: String?) {
        self.timestamp = timestamp
        self.status = status
    }
}

/// The last logout of each user, for XEP-0012 queries to a bare JID.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts, compared byte for byte. An unknown
/// username reads as an account never seen; `setLastLogout(_:of:)`
/// throws `UnknownAccountError` for it. Deleting the account deletes its
/// record.
public protocol LastActivityStore: AnyObject {
    /// The last logout of `username`, or nil if none was recorded.
    func lastLogout(of username: String) throws -> LastLogout?

    /// Records a logout of `username`, replacing the previous one.
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func setLastLogout(_ logout: LastLogout, of username: String) throws
}
