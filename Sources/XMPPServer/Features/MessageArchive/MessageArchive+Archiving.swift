import Synchronization
import XMPPCore
import XMPPNet
import XMPPStorage

extension MessageArchive {
    /// XEP-0313 §6.1.1 and XEP-0359: decides which archives keep a routed
    /// message, stamps the recipient's copy with its archive id, and hands
    /// the copies to the writer. Runs on the routing path, so it does no
    /// storage round trip: preferences come from memory, and the stanza is
    /// serialized later, on the storage thread.
    func archive(_ route: inout RoutedMessage) {
        Self.stripStanzaIDs(claimedBy: route.server.domain, from: &route.element)
        guard Self.isArchivable(route.element), let senderName = route.sender.localpart,
            let recipientName = route.recipient.localpart
        else { return }
        let stored = route.element
        var copies: [ArchiveWriter.Copy] = []
        copies.reserveCapacity(2)
        // Outgoing, in the sender's archive, matched on `to` (XEP-0441 §2.3.2).
        let outgoing = policy.decision(for: senderName, with: route.recipient)
        if outgoing != .skip {
            copies.append(.init(owner: senderName, peer: route.recipient, rosterOnly: outgoing == .ifInRoster))
        }
        // The copy whose id the delivered message carries, and whose it is.
        var stamped: (copy: Int, by: JID)?
        if route.recipient.bare == route.sender.bare {
            // To oneself: one archive, one copy (XEP-0313 §6.1.1).
            if outgoing == .archive { stamped = (0, route.sender.bare) }
        } else {
            // Incoming, in the recipient's archive, matched on `from`.
            let incoming = policy.decision(for: recipientName, with: route.sender)
            if incoming != .skip {
                copies.append(.init(owner: recipientName, peer: route.sender, rosterOnly: incoming == .ifInRoster))
                // A roster rule is settled on the storage thread, after
                // delivery: the message then goes without the id rather
                // than with one that might never be stored.
                if incoming == .archive { stamped = (copies.count - 1, route.recipient.bare) }
            }
        }
        guard !copies.isEmpty else { return }
        let job = ArchiveWriter.Job(
            message: stored, timestamp: clock.milliseconds, sender: route.sender, recipient: recipientName,
            copies: copies)
        let server = route.session.server
        guard let (firstSequence, waiting) = writer.append(job, on: server.loop, storage: server.storage, log: server.log)
        else {
            server.log.error("message from \(route.sender) not archived: the archive's state is not loaded")
            return
        }
        if let stamped {
            route.element.append(Element(
                "stanza-id", namespace: NS.stanzaID,
                attributes: ["id": ids.id(for: firstSequence + Int64(stamped.copy)), "by": stamped.by.description]))
        }
        if waiting > ArchiveQueue<ArchiveWriter.Job>.highWaterMark {
            // The disk falls behind: this sender waits for the writes
            // queued so far, as for an offline message, so that the
            // waiting jobs cannot grow without bound.
            route.session.withStorage({ _ in }, then: { _ in })
        }
    }

    /// Whether a message is worth archiving (XEP-0313 §6.1.1): of one of
    /// `types` (chat or normal in a user's archive), with a body, and no
    /// XEP-0334 `<no-store/>` or `<no-permanent-store/>` hint.
    static func isArchivable(_ element: Element, types: [Message.MessageType] = [.chat, .normal]) -> Bool {
        // An unknown type reads as normal (RFC 6121 §5.2.2).
        let type = element[attribute: "type"].flatMap(Message.MessageType.init(rawValue:)) ?? .normal
        guard types.contains(type) else { return false }
        var hasBody = false
        for case .element(let child) in element.children {
            if child.name == "body", child.namespace == element.namespace { hasBody = true }
            if child.namespace == NS.hints, child.name == "no-store" || child.name == "no-permanent-store" {
                return false
            }
        }
        return hasBody
    }

    /// Removes every `<stanza-id/>` that claims to come from this server,
    /// its `by` being the domain or one of its JIDs (or not a JID at all):
    /// only the server may assign those (XEP-0359 business rule 3), and a
    /// client must not plant one that another user's client would trust.
    static func stripStanzaIDs(claimedBy domain: String, from element: inout Element) {
        element.removeChildren(named: "stanza-id", namespace: NS.stanzaID) { stanzaID in
            guard let by = stanzaID[attribute: "by"], let jid = try? JID(by) else { return true }
            return jid.domainpart == domain
        }
    }
}

/// The users' archive writes waiting for the storage thread: group commit
/// in an `ArchiveQueue`.
///
/// Jobs gather for up to `gatheringTime` (or until `ArchiveQueue.batchSize`
/// wait) before a flush is queued, so that each transaction writes many
/// messages. The flush does not sync either (`synchronous = NORMAL` for
/// that transaction; the next durable commit, an offline message or a
/// roster change, syncs it along). Offline messages are grouped too,
/// durably: `StorageQueue.submitGrouped` shares a commit, and answers no
/// one before it has synced. A query flushes first, on the same serial
/// storage queue, so it sees every message routed before it, and so does
/// stopping the server. What still waits when the process dies (at most
/// `gatheringTime` of messages, plus any the disk is behind on), and what
/// was committed but not synced when the machine loses power, is lost: the
/// price of not holding up delivery.
///
/// It numbers the copies from one counter for all archives, so that the
/// archive order is the routing order.
final class ArchiveWriter: Sendable {
    /// One archive's copy of a message.
    struct Copy: Sendable {
        /// The archive's owner, a local username.
        let owner: String
        /// The other party, as addressed.
        let peer: JID
        /// Whether to keep it only if `peer` is in the owner's roster.
        let rosterOnly: Bool
    }

    /// A routed message and its copies.
    struct Job: Sendable {
        let message: Element
        let timestamp: Int
        /// Who sent it, as stamped on the message.
        let sender: JID
        /// The recipient's username: without that account, or when it
        /// blocks the sender (the message bounces), only the sender's copy
        /// is kept.
        let recipient: String
        let copies: [Copy]
        /// The sequence of the first copy, which `append` assigns; copy *i*
        /// has `firstSequence + i`. (Kept here rather than in each copy, so
        /// that numbering does not copy the routing path's array.)
        var firstSequence: Int64 = 0
    }

    private let queue = ArchiveQueue<Job>()

    /// How long routed messages may wait for the flush that writes them.
    static let gatheringTime = Duration.milliseconds(20)

    /// Starts numbering above `last`, the store's last sequence; called
    /// once, when the archive's state has loaded at start.
    func resume(after last: Int64) {
        queue.resume(after: last)
    }

    /// Gives `job`'s copies their sequences and queues it, and a flush on
    /// `storage` within `gatheringTime` (a timer on `loop`) unless one is
    /// queued already; a job's copies get consecutive sequences. Call on
    /// `loop`.
    /// - Returns: The sequence of the job's first copy (copy *i* has
    ///   `firstSequence + i`), and how many jobs wait, this one included;
    ///   `nil`, queuing nothing, before `resume(after:)`.
    @discardableResult
    func append(
        _ job: Job, on loop: any Loop, storage: any StorageJobs, log: Logger
    ) -> (firstSequence: Int64, waiting: Int)? {
        let appended = queue.append(count: job.copies.count) { first in
            var job = job
            job.firstSequence = first
            return job
        }
        guard let appended else { return nil }
        queue.flushBatched(on: loop, within: Self.gatheringTime, storage: storage, log: log) { [self] stores in
            try flush(stores, log: log)
        }
        return appended
    }

    /// Queues a flush of whatever waits now, without gathering more: when
    /// the server stops.
    func flushNow(storage: any StorageJobs, log: Logger) {
        queue.flushSoon(storage: storage, log: log) { [self] stores in try flush(stores, log: log) }
    }

    /// Writes every waiting job in one transaction; call on the storage
    /// thread.
    /// - Returns: How many items were stored.
    @discardableResult
    func flush(_ stores: Stores, log: Logger) throws -> Int {
        let jobs = queue.take()
        guard !jobs.isEmpty else { return 0 }
        // Without waiting for the disk: losing the last writes in a power
        // failure is the accepted price (see above).
        return try stores.inTransaction(durable: false) {
            var messages: [ArchivedMessage] = []
            messages.reserveCapacity(jobs.count)
            // Whether each recipient exists and takes messages from each
            // sender (XEP-0191: one who blocks the sender while offline
            // bounces it): a message that bounced is kept only in the
            // sender's archive, as the sender wrote it (as Prosody and
            // ejabberd do).
            struct Route: Hashable {
                let recipient: String
                let sender: JID
            }
            var reaches: [Route: Bool] = [:]
            for job in jobs {
                let route = Route(recipient: job.recipient, sender: job.sender.bare)
                let reached = try reaches[route] ?? stores.reaches(job.recipient, from: job.sender)
                reaches[route] = reached
                guard let xml = StoredStanza.serialize(job.message) else { continue }
                var copies: [ArchiveCopy] = []
                copies.reserveCapacity(job.copies.count)
                for (offset, copy) in job.copies.enumerated() where reached || copy.owner == job.sender.localpart {
                    let peer = copy.peer.bare.description
                    if copy.rosterOnly, try stores.roster.item(peer, of: copy.owner)?.inRoster != true { continue }
                    copies.append(ArchiveCopy(
                        owner: copy.owner, sequence: job.firstSequence + Int64(offset),
                        peer: ArchivePeer(bare: peer, resource: copy.peer.resourcepart)))
                }
                if !copies.isEmpty { messages.append(ArchivedMessage(timestamp: job.timestamp, stanza: xml, copies: copies)) }
            }
            // A copy whose owner was deleted since routing is skipped.
            return try stores.archive.append(messages)
        }
    }
}
