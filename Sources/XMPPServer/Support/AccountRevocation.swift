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

    /// Deletes `username` with everything stored for it, ends its sessions
    /// (but `keeping`), removes it from its contacts' rosters with a push,
    /// tells them as if it had cancelled every subscription (RFC 6121 §3.2,
    /// §3.3), and removes its uploaded files.
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
            for slot in deleted.uploadSlots { upload?.files.remove(slot) }
            if let account = try? JID(localpart: username, domainpart: domain) {
                for entry in deleted.rosterEntries { tellContact(entry, accountDeleted: account) }
            }
            completion(.success(true))
        }
    }

    /// Pushes the removal of the deleted `account` to the owner of `entry`,
    /// and hands its available resources the `unsubscribe` (it no longer
    /// sees the owner, nor asks to) and `unsubscribed` (the owner no longer
    /// sees it) the account would have sent.
    private func tellContact(_ entry: RemovedRosterEntry, accountDeleted account: JID) {
        guard let owner = try? JID(localpart: entry.owner, domainpart: domain) else { return }
        var removal = Element("item", namespace: NS.roster, attributes: ["jid": account.description])
        removal[attribute: "subscription"] = "remove"
        Roster.push(removal, version: entry.version, to: owner, server: self)
        let state = entry.item.state
        var kinds: [String] = []
        if state.subscription.includesFrom || state.pendingIn { kinds.append("unsubscribe") }
        if state.subscription.includesTo || state.pendingOut { kinds.append("unsubscribed") }
        for kind in kinds {
            let presence = Element(
                "presence", namespace: NS.client,
                attributes: ["from": account.description, "to": owner.description, "type": kind])
            for handle in sessions.availableSessions(of: owner) { handle.deliver(presence) }
        }
    }
}
