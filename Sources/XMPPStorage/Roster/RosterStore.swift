/// The rosters of the server's users (RFC 6121 §2) with their subscription
/// states (RFC 6121 §3), and each roster's version (RFC 6121 §2.6).
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`).
/// Usernames are prepared localparts and contacts prepared bare JIDs; the
/// store compares both byte for byte. An unknown username reads as an
/// account with an empty roster at version 0; `put(_:of:)` throws
/// `UnknownAccountError` for it.
///
/// Every change bumps the account's roster version by one, atomically with
/// the change, and returns the new version, so that the roster push carries
/// the version of exactly that change (RFC 6121 §2.6). A new account's
/// roster is at version 0. Clients treat the version as an opaque string
/// (RFC 6121 §2.1.1); the store keeps an integer.
///
/// Deleting the account deletes its roster and version.
public protocol RosterStore: AnyObject {
    /// All entries of `username`'s roster, hidden ones (`inRoster == false`)
    /// included, sorted by the UTF-8 bytes of `contact`.
    func items(of username: String) throws -> [RosterItem]

    /// The entry for `contact` in `username`'s roster, or `nil`.
    func item(_ contact: String, of username: String) throws -> RosterItem?

    /// Inserts `item`, or replaces the entry with the same `contact`, and
    /// bumps the version, even if the entry did not change.
    ///
    /// - Returns: The roster's new version.
    /// - Throws: `UnknownAccountError` if there is no account `username`,
    ///   changing nothing.
    func put(_ item: RosterItem, of username: String) throws -> Int

    /// Removes the entry for `contact` and bumps the version.
    ///
    /// - Returns: The roster's new version, or `nil`, with the version
    ///   unchanged, if there was no such entry (or no such account).
    func remove(_ contact: String, of username: String) throws -> Int?

    /// The current version of `username`'s roster: 0 for a new account, one
    /// more for every change since.
    func version(of username: String) throws -> Int

    /// Removes `contact` from every roster that has an entry for it (hidden
    /// ones included), bumping each of those rosters' versions: what an
    /// account's deletion does to its contacts, so that nobody who
    /// registers the name later inherits their subscriptions or
    /// pre-approvals.
    ///
    /// - Returns: Each removed entry with its owner and the owner's new
    ///   roster version, ordered by owner.
    func removeEverywhere(_ contact: String) throws -> [RemovedRosterEntry]
}

/// An entry `RosterStore.removeEverywhere` took out of one user's roster.
public struct RemovedRosterEntry: Sendable, Hashable {
    /// The username whose roster had the entry.
    public var owner: String
    /// The entry as it was.
    public var item: RosterItem
    /// The owner's roster version after the removal.
    public var version: Int

    public init(owner: String, item: RosterItem, version: Int) {
        self.owner = owner
        self.item = item
        self.version = version
    }
}
