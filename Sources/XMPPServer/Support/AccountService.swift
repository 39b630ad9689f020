import XMPPCore
import XMPPNet
import XMPPStorage

/// The account operations sessions perform. Storage lives on its own
/// thread, so each call completes later, on the caller's loop — never
/// synchronously inside the call, so a session can pause and resume
/// around it without re-entering itself.
///
/// Usernames are PRECIS-prepared localparts; passwords arrive in the clear
/// only to be turned into SCRAM credentials (or checked against them) and
/// are never stored or logged.
public protocol AccountService: Sendable {
    /// The stored SCRAM credentials of `username` for `hash`, or nil when
    /// there is no such account.
    func credentials(
        for username: String, _ hash: HashFunction, on loop: any Loop,
        _ completion: @escaping (Result<SCRAMCredentials?, any Error>) -> Void)

    /// The SCRAM-SHA-256 credentials `password` matched for `username`
    /// (SASL PLAIN), or nil for a wrong password or an unknown user, which
    /// cost the same work.
    func verify(
        username: String, password: String, on loop: any Loop,
        _ completion: @escaping (Result<SCRAMCredentials?, any Error>) -> Void)

    /// Creates an account; false when the username is taken.
    func register(
        username: String, password: String, on loop: any Loop,
        _ completion: @escaping (Result<Bool, any Error>) -> Void)

    /// Replaces the password of an existing account (which ends its FAST
    /// tokens); false when there is no such account.
    func changePassword(
        username: String, password: String, on loop: any Loop,
        _ completion: @escaping (Result<Bool, any Error>) -> Void)

    /// Deletes an account, everything stored for it, and its entries in
    /// other users' rosters; `nil` when there was no such account.
    func delete(
        username: String, domain: String, on loop: any Loop,
        _ completion: @escaping (Result<DeletedAccount?, any Error>) -> Void)
}

/// What deleting an account took with it beyond its own rows, for the
/// server to tell the contacts and to remove the files.
public struct DeletedAccount: Sendable {
    /// The account's entries in other users' rosters, now removed.
    public var rosterEntries: [RemovedRosterEntry]
    /// The account's upload slots, whose files are to go too.
    public var uploadSlots: [String]
}
