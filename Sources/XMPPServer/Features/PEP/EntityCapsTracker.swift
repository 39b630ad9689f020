import Synchronization
import XMPPCore

/// What PEP knows of each available resource's XEP-0115 capabilities: the
/// nodes it wants notifications of (its `NODE+notify` features, XEP-0163
/// §4.2), learnt from its presence, from a cache of verified `ver`s, or by
/// asking the resource itself (XEP-0115 §6.3). A resource has at most one
/// query pending, for its latest capabilities, which the PEP services
/// that get its presence (its own account's, and those of the contacts
/// who follow the user) each send from their bare JID, as Prosody's do;
/// an answer is recognised by its sender, the service it answers and its
/// `node`. The first answer tells the interests.
///
/// Shared by every loop, so guarded by a mutex that is never held across
/// I/O. The cache of verified `ver`s is bounded (the oldest entry goes
/// first); per-resource entries live until the resource goes unavailable.
final class EntityCapsTracker: Sendable {
    /// A resource's interests before and after a change.
    struct Change: Equatable {
        var before: Set<String>
        var after: Set<String>

        /// The nodes the resource has just become interested in.
        var added: Set<String> { after.subtracting(before) }
    }

    /// What a presence with capabilities calls for.
    enum Update: Equatable {
        /// Nothing changed.
        case unchanged
        /// The interests are known now.
        case changed(Change)
        /// The `ver` is unknown: send the resource a disco#info query for
        /// `caps.discoNode`.
        case query(EntityCapabilities)
    }

    /// What a service learns from a resource's answer to its query.
    struct Answer: Equatable {
        /// The change of interests, for the first answer.
        var change: Change?
        /// The nodes the first answer made the resource interested in,
        /// whose last items each service sends.
        var added: Set<String>
        /// The services that asked too and still await their answers.
        var awaiting: Set<JID>
    }

    private struct Resource {
        var caps: EntityCapabilities?
        var interests: Set<String>
    }

    /// A query pending for a resource's latest capabilities.
    private struct Query {
        var caps: EntityCapabilities
        /// The services (bare JIDs) that asked and await the answer.
        var services: Set<JID>
        /// Whether an answer told the interests already.
        var answered = false
        /// The nodes that answer added to the resource's interests.
        var added: Set<String> = []
    }

    private struct State {
        /// Interests by `ver`, for verified `ver`s only.
        var verified: [String: Set<String>] = [:]
        /// The keys of `verified`, oldest first.
        var verifiedOrder: [String] = []
        var resources: [JID: Resource] = [:]
        /// The query pending for each resource.
        var queries: [JID: Query] = [:]
    }

    private let state = Mutex(State())
    /// How many verified `ver`s the cache keeps.
    let capacity: Int

    /// A tracker whose cache keeps `capacity` verified `ver`s.
    init(capacity: Int = 1000) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// The nodes `jid` (a full JID) wants notifications of; empty while
    /// unknown.
    func interests(of jid: JID) -> Set<String> {
        state.withLock { $0.resources[jid]?.interests ?? [] }
    }

    /// Records the capabilities in an available presence of `jid` (nil:
    /// none, so no interests); a query it calls for is its own account's.
    func presence(_ caps: EntityCapabilities?, of jid: JID) -> Update {
        state.withLock { state in
            let before = state.resources[jid]
            if let before, before.caps == caps { return .unchanged }
            state.queries[jid] = nil
            guard let caps else {
                state.resources[jid] = Resource(caps: nil, interests: [])
                return .changed(Change(before: before?.interests ?? [], after: []))
            }
            if let interests = state.verified[caps.ver], caps.hash != nil {
                state.resources[jid] = Resource(caps: caps, interests: interests)
                return .changed(Change(before: before?.interests ?? [], after: interests))
            }
            // Unknown: the interests stay as they were until the answer.
            state.resources[jid] = Resource(caps: caps, interests: before?.interests ?? [])
            state.queries[jid] = Query(caps: caps, services: [jid.bare])
            return .query(caps)
        }
    }

    /// Whether `service`, another account that gets the presence of `jid`,
    /// is to ask it about `caps` too: yes while those capabilities are
    /// still the resource's and unanswered; the service then awaits the
    /// answer.
    func ask(_ service: JID, about caps: EntityCapabilities, of jid: JID) -> Bool {
        state.withLock { state in
            guard var query = state.queries[jid], query.caps == caps, !query.answered else { return false }
            query.services.insert(service)
            state.queries[jid] = query
            return true
        }
    }

    /// Takes `jid`'s answer to the pending query of `service`: `info` is
    /// the disco#info `<query/>` of a result, nil for an error. The first
    /// answer tells the interests; one that verifies (XEP-0115 §5.4) is
    /// cached by `ver`, any other serves this resource only. Nil when
    /// `service` asked `jid` nothing, or a result is about another `node`
    /// than the one asked (a query that a newer presence replaced).
    func answer(from jid: JID, to service: JID, info: Element?) -> Answer? {
        state.withLock { state in
            guard var query = state.queries[jid], query.services.contains(service) else { return nil }
            if let node = info?[attribute: "node"], node != query.caps.discoNode { return nil }
            query.services.remove(service)
            var change: Change?
            if !query.answered {
                query.answered = true
                let interests = info.map(Self.interests) ?? []
                if let info, query.caps.isVerified(by: info) {
                    Self.cache(interests, for: query.caps.ver, in: &state, capacity: capacity)
                }
                let before = state.resources[jid]?.interests ?? []
                state.resources[jid]?.interests = interests
                change = Change(before: before, after: interests)
                query.added = change?.added ?? []
            }
            state.queries[jid] = query.services.isEmpty ? nil : query
            return Answer(change: change, added: query.added, awaiting: query.services)
        }
    }

    /// Forgets `jid`, which went unavailable.
    func remove(_ jid: JID) {
        state.withLock { state in
            state.resources[jid] = nil
            state.queries[jid] = nil
        }
    }

    /// The nodes whose `NODE+notify` features `info` lists.
    private static func interests(_ info: Element) -> Set<String> {
        let suffix = "+notify"
        return Set(
            info.elements.filter { $0.name == "feature" && $0.namespace == NS.discoInfo }.compactMap { feature in
                guard let name = feature[attribute: "var"], name.hasSuffix(suffix), name.count > suffix.count
                else { return nil }
                return String(name.dropLast(suffix.count))
            })
    }

    private static func cache(_ interests: Set<String>, for ver: String, in state: inout State, capacity: Int) {
        if state.verified.updateValue(interests, forKey: ver) == nil { state.verifiedOrder.append(ver) }
        while state.verifiedOrder.count > capacity {
            state.verified[state.verifiedOrder.removeFirst()] = nil
        }
    }
}
