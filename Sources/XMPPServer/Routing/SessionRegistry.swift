import Synchronization
import XMPPCore
import XMPPNet

/// A handle on a bound session that any loop may hold: delivery and
/// replacement hop to the session's own loop when called from elsewhere.
///
/// `@unchecked Sendable` is sound because `session` is only touched on its
/// loop: every use goes through `LoopBound`, which checks or hops.
public final class SessionHandle: @unchecked Sendable {
    /// The session's full JID.
    public let jid: JID
    private let session: LoopBound<ClientSession>
    /// The resource's current available presence (stamped with its full
    /// JID, and with the delay of its arrival: `PresenceBroadcast`) and
    /// priority; nil while unavailable. Guarded because routing on any
    /// loop reads it.
    private let availability = Mutex<(presence: Element, priority: Int8)?>(nil)

    init(_ session: ClientSession) {
        self.jid = session.jid!
        self.session = LoopBound(session, on: session.server.loop)
    }

    /// The resource's available presence and priority, or nil.
    public var presence: (presence: Element, priority: Int8)? {
        get { availability.withLock { $0 } }
        set { availability.withLock { $0 = newValue } }
    }

    /// Whether the resource is available (has sent initial presence and
    /// not gone unavailable).
    public var isAvailable: Bool { presence != nil }

    /// Whether this handle stands for `session`; call on the session's loop.
    func refers(to session: ClientSession) -> Bool {
        self.session.loop.inLoop && self.session.wrapped === session
    }

    /// The session itself when the caller runs on its loop, else nil (a
    /// session on another loop cannot be touched from here).
    var sessionOnThisLoop: ClientSession? {
        session.loop.inLoop ? session.wrapped : nil
    }

    /// Sends `element` to the session's client.
    public func deliver(_ element: Element) {
        session.execute { $0.deliver(element) }
    }

    /// Runs `body` with the session on its loop: now if the caller is
    /// there, else posted.
    public func withSession(_ body: @escaping @Sendable (ClientSession) -> Void) {
        session.execute(body)
    }

    /// Ends the session with the `conflict` stream error.
    func replace() {
        session.execute { $0.endBecauseReplaced() }
    }
}

/// Every bound session on the server, by bare JID then resource.
///
/// Shared by all loops, so guarded by a mutex; it is touched on bind,
/// unbind and each routed stanza's lookup, never held across I/O.
public final class SessionRegistry: Sendable {
    private struct State {
        var table: [JID: [String: SessionHandle]] = [:]
        /// How often each account's access was revoked since the server
        /// started (by username; only accounts that ever were). Under the
        /// table's lock, so that a revocation on one loop and a bind on
        /// another cannot interleave.
        var revocations: [String: Int] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// What `bind` did.
    enum BindOutcome {
        /// Bound; no session had this full JID.
        case bound
        /// Bound in place of the session that had this full JID.
        case replaced(SessionHandle)
        /// Not bound: the account already has `maxResources` sessions.
        case tooManyResources
        /// Not bound: the account's access was revoked since the session
        /// authenticated.
        case revoked
    }

    /// Records `handle` under its full JID, unless the account's access
    /// was revoked since `revocationCount(of:)` gave `revocations`, or that
    /// would give the account more than `maxResources` sessions (replacing
    /// a session of the same full JID is always allowed). Checked and done
    /// under one lock, so sessions of one account binding on several loops
    /// at once cannot pass the limit together, nor bind past a revocation.
    func bind(_ jid: JID, _ handle: SessionHandle, revocations: Int, maxResources: Int = .max) -> BindOutcome {
        state.withLock { state in
            guard state.revocations[jid.localpart ?? "", default: 0] == revocations else { return .revoked }
            let resources = state.table[jid.bare, default: [:]]
            if resources[jid.resourcepart!] == nil, resources.count >= maxResources { return .tooManyResources }
            return state.table[jid.bare, default: [:]].updateValue(handle, forKey: jid.resourcepart!)
                .map { .replaced($0) } ?? .bound
        }
    }

    /// Forgets `jid` if it still belongs to `session` (a replaced session
    /// must not remove its successor).
    func remove(_ jid: JID, ifSession session: ClientSession) {
        state.withLock { state in
            guard let handle = state.table[jid.bare]?[jid.resourcepart!], handle.refers(to: session) else { return }
            state.table[jid.bare]![jid.resourcepart!] = nil
            if state.table[jid.bare]!.isEmpty { state.table[jid.bare] = nil }
        }
    }

    /// The session bound to a full JID.
    public func session(_ jid: JID) -> SessionHandle? {
        guard let resource = jid.resourcepart else { return nil }
        return state.withLock { $0.table[jid.bare]?[resource] }
    }

    /// The sessions of an account.
    public func sessions(of bare: JID) -> [SessionHandle] {
        state.withLock { $0.table[bare.bare].map { Array($0.values) } ?? [] }
    }

    /// The sessions of an account that `predicate` accepts, in one pass
    /// under the lock (keep `predicate` cheap).
    public func sessions(of bare: JID, where predicate: (SessionHandle) -> Bool) -> [SessionHandle] {
        state.withLock { $0.table[bare.bare]?.values.filter(predicate) ?? [] }
    }

    /// The available sessions of an account (RFC 6121 §4.1: those that
    /// sent initial presence).
    public func availableSessions(of bare: JID) -> [SessionHandle] {
        sessions(of: bare, where: \.isAvailable)
    }

    /// The available resources of `bare` with the highest non-negative
    /// priority: where a chat or normal message to the bare JID goes (RFC
    /// 6121 §8.5.2.1.1), whether it is routed now or handed on by a session
    /// that ended before its client acknowledged it.
    public func topPriorityResources(of bare: JID) -> [SessionHandle] {
        // Each handle's presence is read once: it takes the handle's lock.
        let candidates = sessions(of: bare).compactMap { handle in
            handle.presence.flatMap { $0.priority >= 0 ? (handle, $0.priority) : nil }
        }
        guard let top = candidates.map(\.1).max() else { return [] }
        return candidates.filter { $0.1 == top }.map(\.0)
    }

    /// How often `username`'s access was revoked: a session authenticated
    /// when the count was lower may not bind any more.
    func revocationCount(of username: String) -> Int {
        state.withLock { $0.revocations[username, default: 0] }
    }

    /// Revokes `username`'s access (its password changed, or it was
    /// deleted) and returns its sessions, detached ones included, for the
    /// caller to end.
    func revoke(_ username: String, domain: String) -> [SessionHandle] {
        let bare = try? JID(localpart: username, domainpart: domain)
        return state.withLock { state in
            state.revocations[username, default: 0] += 1
            return bare.flatMap { state.table[$0].map { Array($0.values) } } ?? []
        }
    }

    /// Every bound session, sorted by JID.
    public var all: [SessionHandle] {
        state.withLock { $0.table.values.flatMap(\.values) }.sorted { $0.jid.description < $1.jid.description }
    }

    /// How many sessions are bound.
    public var count: Int {
        state.withLock { $0.table.values.reduce(0) { $0 + $1.count } }
    }
}
