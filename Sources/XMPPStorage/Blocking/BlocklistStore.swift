/// The blocklists of the server's users (XEP-0191: Blocking Command): the
/// JIDs each user blocks, as prepared JID strings (bare, full, a domain, or
/// a domain with a resource).
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts and JIDs prepared by the caller; the
/// store compares both byte for byte. An unknown username reads as an
/// account with an empty blocklist; `block(_:for:)` throws
/// `UnknownAccountError` for it. Deleting the account deletes its list.
public protocol BlocklistStore: AnyObject {
    /// The JIDs `username` blocks, sorted by their UTF-8 bytes.
    func blocklist(of username: String) throws -> [String]

    /// Whether `username` blocks any of `jids` (the forms of one sender's
    /// JID that a blocklist item can match, XEP-0191 §4).
    func blocks(_ username: String, anyOf jids: [String]) throws -> Bool

    /// Adds `jids` to the blocklist of `username`; JIDs already there stay
    /// once.
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`,
    ///   adding nothing.
    func block(_ jids: [String], for username: String) throws

    /// Removes `jids` from the blocklist of `username`; JIDs not there are
    /// ignored.
    func unblock(_ jids: [String], for username: String) throws

    /// Empties the blocklist of `username` (XEP-0191 §3.4).
    func unblockAll(for username: String) throws
}
