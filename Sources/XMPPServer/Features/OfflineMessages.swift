import Foundation
import XMPPCore
import XMPPStorage

/// XEP-0160: messages for users with no available resource are stored
/// durably and delivered at the user's next initial presence, in order,
/// with an XEP-0203 `<delay/>` stamp, then removed.
///
/// Durable means committed before the sender's next stanza is handled: the
/// sender's session waits for the storage job, and the job is group
/// committed (`StorageJobs.submitGrouped`), so the wait ends only once the
/// transaction holding the message, shared with the messages other senders
/// stored meanwhile, has committed. Nothing the server acknowledged after
/// the message (the answer to a later stanza, an XEP-0198 count) can then
/// be lost in a crash; the group only spreads one sync of the journal over
/// many senders.
///
/// Which messages are kept: those with a body (XEP-0160 §3: the others,
/// chat states and the like, lose their meaning with time), or with an
/// XEP-0334 `<store/>` hint; never one with a `<no-store/>` hint (XEP-0334
/// §4.2: not even temporarily). `<no-permanent-store/>` allows offline
/// storage, which is temporary; it only keeps a message out of the archive.
///
/// The `onMessageOffline` fallback, and an `InitialPresence` observer
/// (after the pending subscription requests); fires `MessageStoredOffline`
/// once a message is committed. The server's disco#info
/// lists `msgoffline`, the feature name the disco registry gives offline
/// storage, as Prosody and ejabberd do.
public struct OfflineMessages: ServerFeature {
    public init() {}

    public func install(_ hooks: Hooks) {
        hooks.advertise("msgoffline")
        hooks.onMessageOffline { undelivered in
            if let sender = undelivered.waitingSender {
                Self.store(undelivered, from: sender)
            } else {
                Self.keep(undelivered.message, for: undelivered.user, server: undelivered.server)
            }
            return .handled
        }
        hooks.on(InitialPresence.self) { login in Self.deliver(to: login.session) }
    }

    private enum Outcome: Sendable {
        case stored, overQuota, unreachable, notKept
    }

    /// Keeps `undelivered`'s message for its user, answering `session`, the
    /// waiting sender, with an error when the account does not exist,
    /// blocks the sender, or is over its quota.
    private static func store(_ undelivered: UndeliveredMessage, from session: ClientSession) {
        guard let username = undelivered.user.localpart else { return }
        let storing = job(storing: undelivered.message, for: username, server: session.server)
        session.withStorage(grouped: true, storing) { result in
            switch result {
            case .success(.unreachable):
                undelivered.bounce(StanzaError(.serviceUnavailable))
            case .success(.overQuota):
                session.log.notice("offline quota of \(username) reached")
                session.server.metrics.limitsHit.increment(.offlineQuota)
                undelivered.bounce(
                    StanzaError(.resourceConstraint, type: .wait, text: "the recipient's offline storage is full"))
            case .success(.stored):
                session.server.hooks.fire(
                    MessageStoredOffline(message: undelivered.message, user: undelivered.user, server: session.server))
            case .success(.notKept):
                break
            case .failure(let error):
                session.log.error("offline storage failed: \(error)")
                undelivered.bounce(StanzaError(.internalServerError))
            }
        }
    }

    /// Keeps `message` for `user` with no session waiting for the outcome
    /// (a message its recipient's session accepted but never acknowledged);
    /// a failure is logged.
    private static func keep(_ message: Message, for user: JID, server: ServerContext) {
        guard let username = user.localpart else { return }
        let storing = job(storing: message, for: username, server: server)
        server.storage.run(on: server.loop, grouped: true, storing) { result in
            switch result {
            case .success(.stored): server.hooks.fire(MessageStoredOffline(message: message, user: user, server: server))
            case .success(.notKept): break
            case .success(let outcome): server.log.notice("undelivered message for \(user) dropped: \(outcome)")
            case .failure(let error): server.log.error("offline storage failed: \(error)")
            }
        }
    }

    /// The storage job that keeps `message` for `username`.
    private static func job(
        storing message: Message, for username: String, server: ServerContext
    ) -> @Sendable (Stores) throws -> Outcome {
        let worthKeeping = Self.isWorthKeeping(message)
        let xml = StoredStanza.serialize(message.element)
        let sender = message.element[attribute: "from"] ?? ""
        let senderJID = message.from
        let now = Int(Date().timeIntervalSince1970 * 1000)
        let limits = server.config.limits
        let quota = OfflineQuota(messages: limits.offlineQuota, bytes: limits.offlineQuotaSize)
        return { stores in
            // No such account, or it blocks the sender (XEP-0191 §3.3).
            guard let senderJID, try stores.reaches(username, from: senderJID) else {
                return .unreachable
            }
            guard worthKeeping, let xml else { return .notKept }
            let stored = try stores.offline.store(xml, from: sender, timestamp: now, for: username, quota: quota)
            return stored ? .stored : .overQuota
        }
    }

    /// Whether `message` is kept for later (see the type's notes).
    static func isWorthKeeping(_ message: Message) -> Bool {
        let element = message.element
        if element.child("no-store", namespace: NS.hints) != nil { return false }
        return message.body != nil || element.child("store", namespace: NS.hints) != nil
    }

    /// Sends the messages kept for `session`'s user, each with a delay
    /// stamp, and removes them once they are queued on the connection;
    /// messages routed to the session while they load wait behind them.
    ///
    /// The backlog is parsed with one parser and goes out in few large
    /// writes (`ClientSession.sendingTogether`), and is removed in one
    /// statement. A stored message that does not parse back (a damaged
    /// row) is removed too, with an error logged, so that it can neither
    /// hold the user's quota forever nor be retried at every login.
    private static func deliver(to session: ClientSession) {
        guard let username = session.username else { return }
        let domain = session.server.domain
        // What is routed to the user meanwhile was sent after the backlog.
        session.holdDeliveries()
        session.withStorage({ stores in try stores.offline.messages(for: username) }) { result in
            defer { session.releaseDeliveries() }
            guard case .success(let messages) = result, !messages.isEmpty else { return }
            var finished: Set<Int> = []
            let reader = StoredStanzaReader()
            session.sendingTogether {
                for stored in messages {
                    // A stream that ends meanwhile (a limit it reached) keeps
                    // the rest for the next login; what it was sent and did
                    // not acknowledge is handed back as the stream ends.
                    guard session.phase != .closed else { break }
                    finished.insert(stored.id)
                    guard var element = reader.parse(stored.stanza) else {
                        session.log.error("offline message \(stored.id) for \(username) does not parse; deleted")
                        continue
                    }
                    element.append(.delay(from: domain, at: stored.timestamp))
                    session.send(element)
                }
            }
            let ids = finished
            session.withStorage(grouped: true, { stores in try stores.offline.remove(ids, for: username) }) { result in
                if case .failure(let error) = result {
                    session.log.error("offline messages for \(username) not removed after delivery: \(error)")
                }
            }
        }
    }
}
