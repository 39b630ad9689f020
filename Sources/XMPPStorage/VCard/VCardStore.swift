/// The vCards of the server's users (XEP-0054: vcard-temp), one per account,
/// kept as serialized XML.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts, compared byte for byte. An unknown
/// username reads as an account without a vCard; `setVCard(_:of:)` throws
/// `UnknownAccountError` for it. Deleting the account deletes its vCard.
public protocol VCardStore: AnyObject {
    /// The stored `<vCard xmlns='vcard-temp'/>` element of `username`,
    /// serialized, or `nil` when none was ever set.
    func vCard(of username: String) throws -> String?

    /// Replaces the vCard of `username` (XEP-0054 §3.2: a set replaces the
    /// whole vCard).
    ///
    /// - Throws: `UnknownAccountError` if there is no account `username`.
    func setVCard(_ xml: String, of username: String) throws
}
