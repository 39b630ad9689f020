import Synchronization
import XMPPCore
import XMPPNet

/// A handle on a connected component that any loop may hold; delivery
/// hops to the component's loop.
///
/// `@unchecked Sendable` is sound because the session is only touched on
/// its loop, through `LoopBound`, which checks or hops.
public final class ComponentHandle: @unchecked Sendable {
    private let session: LoopBound<ComponentSession>

    init(_ session: ComponentSession) {
        self.session = LoopBound(session, on: session.server.loop)
    }

    /// Sends `element` to the component.
    public func deliver(_ element: Element) {
        session.execute { $0.deliver(element) }
    }

    /// Whether this handle stands for `session`; call on the session's loop.
    func refers(to session: ComponentSession) -> Bool {
        self.session.loop.inLoop && self.session.wrapped === session
    }
}

/// The external components connected now, by domain: one stream each.
/// Shared by all loops, so guarded by a mutex.
public final class ComponentRegistry: Sendable {
    private let table = Mutex<[String: ComponentHandle]>([:])

    public init() {}

    /// Records `handle` as `domain`'s stream; false if one is there already.
    func connect(_ domain: String, _ handle: ComponentHandle) -> Bool {
        table.withLock { table in
            guard table[domain] == nil else { return false }
            table[domain] = handle
            return true
        }
    }

    /// Forgets `domain`'s stream if it is `session`'s.
    func disconnect(_ domain: String, ifSession session: ComponentSession) {
        table.withLock { table in
            if table[domain]?.refers(to: session) == true { table[domain] = nil }
        }
    }

    /// The stream of the component at `domain`, if it is connected.
    public func component(_ domain: String) -> ComponentHandle? {
        table.withLock { $0[domain] }
    }

    /// The domains of the connected components, sorted.
    public var connectedDomains: [String] {
        table.withLock { $0.keys.sorted() }
    }
}
