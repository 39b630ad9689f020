import XMPPCore
import XMPPStorage

/// What a password change or an account deletion does to the account's
/// sessions and contacts: nobody keeps the old access, and nobody who
/// registers a deleted name later inherits anything of it.
extension ServerContext {
    /// Ends every session of `username` but `keeping` (the one that asked),
    /// those waiting for stream resumption included, and stops sessions
    /// that authenticated before now from binding.
    func revokeSessions(of username: String, except keeping: ClientSession? = nil, because reason: String) {
        let kept = keeping.map(ObjectIdentifier.init)
        for handle in sessions.revoke(username, domain: domain) {
            handle.withSession { session in
                guard ObjectIdentifier(session) != kept else { return }
                session.fail(StreamError(.notAuthorized, text: reason))
            }
        }
    }

    /// Deletes `username` with everything stored for it and ends its
    /// sessions (but `keeping`); then fires `AccountDeleted`, on which its
    /// contacts are told (`Subscriptions`) and its files removed
    /// (`HTTPUpload`).
    /// - Parameter completion: `true` once deleted; `false` if there was no
    ///   such account.
    func deleteAccount(
        _ username: String, except keeping: ClientSession? = nil,
        then completion: @escaping (Result<Bool, any Error>) -> Void
    ) {
        let reason = "the account was deleted"
        revokeSessions(of: username, except: keeping, because: reason)
        accounts.delete(username: username, domain: domain, on: loop) { [self] result in
            guard case .success(let deleted?) = result else { return completion(result.map { _ in false }) }
            // Sessions that authenticated while the deletion waited its turn.
            revokeSessions(of: username, except: keeping, because: reason)
            log.info("account \(username)@\(domain) deleted")
            if let account = try? JID(localpart: username, domainpart: domain) {
                hooks.fire(AccountDeleted(account: account, deleted: deleted, server: self))
            }
            completion(.success(true))
        }
    }
}
