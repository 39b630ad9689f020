import Synchronization
import XMPPCore

/// What PEP knows of each available resource's XEP-0115 capabilities: the
/// nodes it wants notifications of (its `NODE+notify` features, XEP-0163
/// §4.2), learnt from its presence, from a cache of verified `ver`s, or by
/// asking the resource itself (XEP-0115 §6.3).
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
        /// The `ver` is unknown: send the resource a disco#info query with
        /// this id, for `caps.discoNode`.
        case query(id: String, caps: EntityCapabilities)
    }

    private struct Resource {
        var caps: EntityCapabilities?
        var interests: Set<String>
    }

    private struct State {
        /// Interests by `ver`, for verified `ver`s only.
        var verified: [String: Set<String>] = [:]
        /// The keys of `verified`, oldest first.
        var verifiedOrder: [String] = []
        var resources: [JID: Resource] = [:]
        /// The disco#info queries awaiting an answer, by IQ id.
        var queries: [String: (jid: JID, caps: EntityCapabilities)] = [:]
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
    /// none, so no interests).
    func presence(_ caps: EntityCapabilities?, of jid: JID) -> Update {
        state.withLock { state in
            let before = state.resources[jid]
            if let before, before.caps == caps { return .unchanged }
            state.queries = state.queries.filter { $0.value.jid != jid }
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
            let id = "caps-" + Hex.encode(Crypto.randomBytes(count: 8))
            state.queries[id] = (jid, caps)
            return .query(id: id, caps: caps)
        }
    }

    /// Takes the answer to the query `id` from `jid`: `info` is the
    /// disco#info `<query/>` of a result, nil for an error. A result that
    /// verifies (XEP-0115 §5.4) is cached by `ver`; any other serves this
    /// resource only. Nil when the answer is not to a query of ours, or
    /// comes from another JID.
    func answer(id: String, from jid: JID, info: Element?) -> Change? {
        state.withLock { state in
            guard let query = state.queries[id], query.jid == jid else { return nil }
            state.queries[id] = nil
            let interests = info.map(Self.interests) ?? []
            if let info, query.caps.isVerified(by: info) { Self.cache(interests, for: query.caps.ver, in: &state, capacity: capacity) }
            guard let resource = state.resources[jid], resource.caps == query.caps else { return nil }
            state.resources[jid]?.interests = interests
            return Change(before: resource.interests, after: interests)
        }
    }

    /// Forgets `jid`, which went unavailable.
    func remove(_ jid: JID) {
        state.withLock { state in
            state.resources[jid] = nil
            state.queries = state.queries.filter { $0.value.jid != jid }
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
