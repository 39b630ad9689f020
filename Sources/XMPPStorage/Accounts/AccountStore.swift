import XMPPCore

/// The accounts of the server's domain and their SCRAM credentials.
///
/// Synchronous: the server calls it on the storage thread (`StorageQueue`),
/// never on an event loop. Usernames are localparts already prepared with
/// PRECIS UsernameCaseMapped (RFC 7622 §3.3) by the caller; the store
/// compares them byte for byte.
///
/// Passwords are never stored, only `SCRAMCredentials` for SHA-1 and
/// SHA-256 (RFC 5802 §5, RFC 7677): one set per hash function.
public protocol AccountStore: AnyObject {
    /// Creates an account.
    ///
    /// - Parameters:
    ///   - username: The prepared localpart.
    ///   - credentials: At least one set, at most one per hash function.
    /// - Returns: `false`, changing nothing, if the username is taken (the
    ///   server answers `conflict`, RFC 6120 §8.3.3.2).
    func createAccount(_ username: String, credentials: [SCRAMCredentials]) throws -> Bool

    /// The credentials of `username` for `hashFunction`, or `nil` if there is
    /// no such account or it has none for that hash.
    func credentials(of username: String, for hashFunction: HashFunction) throws
        -> SCRAMCredentials?

    /// Replaces all the credentials of `username`, as a password change does;
    /// hash functions missing from `credentials` lose theirs. Through
    /// `Stores`, it also deletes the account's FAST tokens.
    ///
    /// - Returns: `false` if there is no such account.
    func replaceCredentials(of username: String, with credentials: [SCRAMCredentials]) throws
        -> Bool

    /// Deletes an account and everything stored for it.
    ///
    /// - Returns: `false` if there was no such account.
    func deleteAccount(_ username: String) throws -> Bool

    /// Whether the account exists.
    func accountExists(_ username: String) throws -> Bool

    /// All usernames, sorted by their UTF-8 bytes.
    func usernames() throws -> [String]

    /// The number of accounts.
    func accountCount() throws -> Int
}

extension Array where Element == SCRAMCredentials {
    /// Checks what every store requires of a new set of credentials.
    func checkValidForAccount() {
        precondition(!isEmpty, "an account needs credentials")
        precondition(
            Set(map(\.hashFunction)).count == count, "one set of credentials per hash function")
    }
}
