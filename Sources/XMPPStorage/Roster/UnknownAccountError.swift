/// A store was asked to keep data for a username that has no account.
///
/// Only operations that add data throw it (`RosterStore.put(_:of:)`,
/// `OfflineStore.store(_:from:timestamp:for:quota:)`): data must belong to
/// an account, or deleting the account could not delete it. Reads answer an
/// unknown username as an empty account, and removals remove nothing. The
/// server only calls the stores for existing accounts, so this error means
/// the account was deleted in between.
public struct UnknownAccountError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The username that has no account.
    public let username: String

    /// Creates the error for `username`.
    public init(username: String) {
        self.username = username
    }

    /// Names the username, for logs.
    public var description: String {
        "no account named \"\(username)\""
    }
}
