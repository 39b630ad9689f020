import Synchronization
import XMPPCore
import XMPPNet

/// The ad-hoc command sessions waiting for their next stage (XEP-0050 §3.4:
/// `sessionid`), bounded so that nobody makes the server hold many.
///
/// Only admins can open a session (anyone else is refused before one is
/// made), so the bounds are fixed, not settings: at most
/// `maximumPerAccount` per admin account, the oldest giving way to a new
/// one (a client that forgets to cancel never locks its admin out), and
/// each expires `lifetime` after it was opened (every command here has
/// one stage after its form).
///
/// Shared by every loop, so guarded by a mutex; never held across I/O.
final class AdHocSessions: Sendable {
    /// Most sessions one admin account holds at a time.
    static let maximumPerAccount = 5
    /// How long a session waits for its next stage.
    static let lifetime = Duration.seconds(600)

    /// A session's state between two stages.
    struct Entry: Sendable {
        /// The command's node.
        var node: String
        /// The full JID that started it: only it may continue it.
        var owner: JID
        /// When it expires.
        var expiry: ContinuousClock.Instant
        /// How many sessions were opened before it: its age among sessions
        /// opened in the same instant.
        var serial: Int
    }

    /// Why an id does not lead to a session the requester may continue.
    enum Refusal: Error {
        /// Unknown, another command's, or another requester's.
        case unknown
        /// It was there but expired.
        case expired
    }

    private let entries = Mutex<(open: [String: Entry], opened: Int)>(([:], 0))

    /// Opens a session of `node` for `owner` and returns its id, ending the
    /// owner account's oldest one when it holds `maximumPerAccount`.
    func open(_ node: String, for owner: JID, now: ContinuousClock.Instant) -> String {
        let id = Base64.encodeURLSafe(Crypto.randomBytes(count: 12))
        entries.withLock { entries in
            entries.open = entries.open.filter { $0.value.expiry > now }
            let own = entries.open.filter { $0.value.owner.bare == owner.bare }.sorted { $0.value.serial < $1.value.serial }
            for (oldest, _) in own.prefix(max(0, own.count - Self.maximumPerAccount + 1)) {
                entries.open[oldest] = nil
            }
            entries.open[id] = Entry(node: node, owner: owner, expiry: now + Self.lifetime, serial: entries.opened)
            entries.opened += 1
        }
        return id
    }

    /// Ends the session `id` of `node` that `owner` started: every command
    /// here is at its last stage once its session is continued.
    /// - Throws: `Refusal`; an expired session is ended too.
    func close(_ id: String, node: String, for owner: JID, now: ContinuousClock.Instant) throws(Refusal) {
        let found = entries.withLock { entries -> Entry? in
            guard let entry = entries.open[id], entry.node == node, entry.owner == owner else { return nil }
            entries.open[id] = nil
            return entry
        }
        guard let found else { throw .unknown }
        guard found.expiry > now else { throw .expired }
    }

    /// How many sessions are open, expired ones not yet swept included.
    var count: Int { entries.withLock { $0.open.count } }
}
